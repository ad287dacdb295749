import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { Authenticated } from '../../common/decorators';
import { oneOf, routeDocs } from '../../openapi/api-docs';
import { Conditional, ETAG_HEADERS } from '../caching/conditional-answers';
import { RatingArgs } from '../dto/plugin-lifecycle.dto';
import { CurrentUserView } from '../../auth/current-user.view';
import { CataloguePage, OwnPluginsPage } from '../dto/plugin.dto';
import { PLUGIN_GROUPS, PLUGIN_STATUSES, PLUGIN_TYPES, TAG_MAX_LENGTH } from '../shared/plugin-constants';
import { ApiPluginId, NOT_FOUND } from '../shared/plugin-routes';
import { PluginView } from '../views/plugin-audience';
import { AdminPluginView, OwnerPluginView, PublicPluginView } from '../views/plugin-views';
import { CATALOGUE_SORTS } from './catalogue-sql';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_SEARCH_LENGTH } from './list-query';
import { NOT_RATABLE, OWN_RATING, STARS_INVALID } from './plugin-ratings.service';

/** `limit` and `offset` of every plugin list (and of a version's test-runs). */
export const ApiPageQuery = () =>
  applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, default: DEFAULT_LIMIT },
      description: `Above ${MAX_LIMIT} counts as ${MAX_LIMIT}`,
    }),
    ApiQuery({ name: 'offset', required: false, schema: { type: 'integer', minimum: 0, default: 0 } }),
  );

/**
 * The catalogue's routes: the lists, the caller, one plugin, a rating.
 * Each is one decorator holding its access, its documented answers and its arguments; the
 * controller gives it its path and handler.
 */
export const CATALOGUE_ROUTES = {
  list: () =>
    routeDocs(
      PluginView('catalogue', {
        summary: 'The catalogue: approved plugins, newest first (or by `sort`)',
        description:
          '400 with `errors` naming each malformed or repeated parameter; 403 when someone who is not an ' +
          'admin asks for `status=pending` or `status=rejected`.',
        data: CataloguePage,
        fails: { 400: ['Invalid query parameters'], 403: ['Admin privileges required'] },
        headers: ETAG_HEADERS,
      }),
      Conditional('reader'),
      ApiQuery({
        name: 'status',
        required: false,
        enum: [...PLUGIN_STATUSES],
        description: '`pending` and `rejected` are for admins only; `approved` by default',
      }),
      ApiQuery({ name: 'group', required: false, enum: [...PLUGIN_GROUPS] }),
      ApiQuery({ name: 'type', required: false, enum: [...PLUGIN_TYPES] }),
      ApiQuery({
        name: 'q',
        required: false,
        schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH },
        description: 'Part of the name, description or author, any case',
      }),
      ApiQuery({
        name: 'min_rating',
        required: false,
        schema: { type: 'number', minimum: 0, maximum: 5 },
        description: 'Mean rating (as shown, one decimal) at least this; up to one decimal',
      }),
      ApiQuery({
        name: 'sort',
        required: false,
        enum: [...CATALOGUE_SORTS],
        description: '`newest` by default',
      }),
      ApiQuery({
        name: 'tag',
        required: false,
        schema: { type: 'string', maxLength: TAG_MAX_LENGTH },
        description: 'Plugins that have this tag (any case)',
      }),
      ApiPageQuery(),
    ),
  me: () => routeDocs(Authenticated({ summary: 'The caller', data: CurrentUserView })),
  mine: () =>
    routeDocs(
      PluginView('uploader', {
        summary: "The caller's uploads in any status, newest first, with rejection reasons",
        description:
          "A page in the catalogue's shape (`total`, `limit`, `offset`, `plugins`), so every plugin list " +
          'reads alike; 400 with `errors` naming a malformed `limit` or `offset`.',
        data: OwnPluginsPage,
        fails: { 400: ['Invalid query parameters'] },
      }),
      ApiPageQuery(),
    ),
  detail: () =>
    routeDocs(
      PluginView('detail', {
        summary: 'One plugin',
        description:
          'Admin view for admins, owner view for its uploader, public view for others. A plugin that is not ' +
          'approved is not found except by its uploader and admins.',
        data: oneOf(PublicPluginView, OwnerPluginView, AdminPluginView),
        fails: NOT_FOUND,
        headers: ETAG_HEADERS,
      }),
      Conditional('reader'),
      ApiPluginId(),
    ),
  rate: () =>
    routeDocs(
      PluginView('detail', {
        summary: 'Rate an approved plugin from 1 to 5 stars; rating again replaces your rating',
        description: 'A plugin uploaded from your own mailbox (`Alice+x@` is `alice@`) cannot be rated.',
        data: oneOf(PublicPluginView, AdminPluginView),
        fails: { 400: [STARS_INVALID], 403: [OWN_RATING], ...NOT_FOUND, 409: [NOT_RATABLE] },
        args: RatingArgs,
      }),
      ApiPluginId(),
    ),
};
