import { describe, expect, it } from 'vitest';
import { isPublicRoute, matchRoute, paths, safeNextPath } from './routes.ts';

describe('routes', () => {
  it('matches the pages and decodes ids', () => {
    expect(matchRoute('/')).toEqual({ name: 'overview' });
    expect(matchRoute('/hives/apiary.3')).toEqual({ name: 'hive', hiveId: 'apiary.3' });
    expect(matchRoute('/boxes/b%201/')).toEqual({ name: 'box', boxId: 'b 1' });
    expect(matchRoute('/profile')).toEqual({ name: 'profile' });
    expect(matchRoute('/hives/%E0%A4%A')).toEqual({ name: 'not-found', path: '/hives/%E0%A4%A' });
    expect(matchRoute('/hives/1/extra').name).toBe('not-found');
    expect(matchRoute(paths.box('a/b'))).toEqual({ name: 'box', boxId: 'a/b' });
  });

  it('keeps app paths clear of the server paths', () => {
    for (const path of [paths.hive('1'), paths.box('1'), paths.profile(), paths.signIn(), paths.signUp()]) {
      expect(path).not.toMatch(/^\/(graphql|api|iot|entrance|media|health|metrics|openapi\.json)(\/|$)/);
    }
  });

  it('only lets sign-in pages and the not-found page through without a session', () => {
    expect(isPublicRoute(matchRoute('/sign-in'))).toBe(true);
    expect(isPublicRoute(matchRoute('/'))).toBe(false);
    expect(isPublicRoute(matchRoute('/profile'))).toBe(false);
  });

  it('returns after sign-in only to pages of this app', () => {
    expect(safeNextPath('/hives/2?range=7d')).toBe('/hives/2?range=7d');
    expect(safeNextPath('//evil.example/x')).toBe('/');
    expect(safeNextPath('https://evil.example')).toBe('/');
    expect(safeNextPath('/\\evil.example')).toBe('/');
    expect(safeNextPath('/sign-in')).toBe('/');
    expect(safeNextPath(null)).toBe('/');
  });
});
