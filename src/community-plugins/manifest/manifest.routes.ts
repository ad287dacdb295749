import { routeDocs } from '../../openapi/api-docs';
import { ManifestKey, PluginManifest } from '../dto/plugin-lifecycle.dto';
import { PluginView } from '../views/plugin-audience';

/**
 * The manifest's routes as the API documents them (access and documentation in one decorator each; the controller declares the
 * paths, in the order the router and the OpenAPI document list them).
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
