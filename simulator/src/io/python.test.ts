import { describe, expect, it } from 'vitest';
import { findPython } from './python.ts';

describe('findPython', () => {
  it('says which Python it needs when the given one cannot import the modules', () => {
    expect(() => findPython(['onnx', 'numpy'], '/nonexistent/python3')).toThrow(/no Python with onnx and numpy found \(tried \/nonexistent\/python3\).*apt-get install -y python3-onnx/);
    expect(() => findPython(['torch', 'onnx', 'numpy'], '/nonexistent/python3')).toThrow(
      'no Python with torch, onnx and numpy found (tried /nonexistent/python3); install them with apt-get install -y python3-torch python3-onnx python3-numpy',
    );
  });
});
