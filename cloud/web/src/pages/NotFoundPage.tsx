import { PageTitle } from '../components/Layout.tsx';
import { useDocumentTitle } from '../hooks.ts';
import { paths } from '../lib/routes.ts';
import { Link } from '../router.tsx';

export function NotFoundPage({ path }: { path: string }) {
  useDocumentTitle('Page not found');
  return (
    <div class="card">
      <PageTitle>Page not found</PageTitle>
      <p>
        There is no page at <code>{path}</code>. <Link href={paths.overview()}>Go to your apiary</Link>.
      </p>
    </div>
  );
}
