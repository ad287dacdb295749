import { routeDocs } from '../../openapi/api-docs';
import { ManifestKey, PluginManifest } from '../dto/plugin-lifecycle.dto';
import { PluginView } from '../views/plugin-audience';

/**
 * The manifest's routes: the signed manifest and its key.
 * Each is one decorator holding its access, its documented answers and its arguments; the
 * controller gives it its path and handler.
 */
export const MANIFEST_ROUTES = {
  manifest: () =>
    routeDocs(
      PluginView('catalogue', {
        summary: 'The signed manifest: the approved catalogue as the framework loads it',
        description:
          'One entry per approved plugin whose file is present and has its approved digest; never a file path ' +
          '(a loader finds a file by its digest). `signature` signs every other member; the key is at `manifest/key/`. ' +
          'A loader refuses a manifest past `expires_at` or with a `serial` lower than the last it loaded (docs/plugin-manifest.md).',
        data: PluginManifest,
      }),
    ),
  key: () =>
    routeDocs(
      PluginView('catalogue', {
        summary: 'The public key that verifies the manifest',
        data: ManifestKey,
      }),
    ),
};
