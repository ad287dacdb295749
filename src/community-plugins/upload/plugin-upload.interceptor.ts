import {
  CallHandler,
  ExecutionContext,
  HttpStatus,
  Inject,
  Injectable,
  NestInterceptor,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import { ApiError } from '../../common/api-error';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { isMultipart } from '../../http/multipart-fields.guard';
import { readMultipart, type MultipartRules } from '../../http/multipart';
import { PLUGIN_FILE_PART } from '../shared/plugin-constants';
import { METADATA_FIELDS, VERSION_FIELDS } from '../shared/plugin-metadata';
import { hasPythonExtension } from '../files/plugin-storage';
import {
  fileTooLarge,
  INVALID_METADATA,
  ONE_FILE_ONLY,
  ONLY_PY_FILES,
  invalidMetadata,
} from './upload-answers';
import type { UploadedPluginFile } from './upload-answers';

/** The uploaded plugin, as this interceptor leaves it for the handler. */
export type UploadRequest = FastifyRequest & { file?: UploadedPluginFile };

/**
 * Parses the multipart upload before the handler runs, in the spec's order: the file name's
 * extension is checked from the part header, before any of the file is read; the size limit
 * stops the parser at the limit, so at most that many bytes of the file are ever held.
 */
@Injectable()
export class PluginUploadInterceptor implements NestInterceptor {
  protected readonly rules: MultipartRules;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.rules = {
      // Room for the text fields (tags may come as one part each) and the multipart framing.
      fields: 32,
      fieldSize: 16 * 1024,
      parts: 40,
      namedFields: { names: METADATA_FIELDS, message: INVALID_METADATA },
      file: {
        field: PLUGIN_FILE_PART,
        maxSize: config.pluginUploadMaxSize,
        refuse: (filename) =>
          hasPythonExtension(filename) ? null : new ApiError(HttpStatus.BAD_REQUEST, ONLY_PY_FILES),
        tooLarge: () => new ApiError(HttpStatus.PAYLOAD_TOO_LARGE, fileTooLarge(config.pluginUploadMaxSize)),
        unexpected: () => new ApiError(HttpStatus.BAD_REQUEST, ONE_FILE_ONLY),
      },
    };
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<UploadRequest>();
    // Not multipart: no file, which the service answers in its turn.
    if (isMultipart(request)) {
      const { fields, file } = await readMultipart(request.raw, this.rules).catch((error: unknown) => {
        // A text part over its limit is a metadata finding like the others.
        if (error instanceof ApiError && error.message === INVALID_METADATA && error.data === undefined)
          throw invalidMetadata(error.getStatus(), error.errors as Record<string, string>);
        throw error;
      });
      request.body = fields;
      request.file = file;
    }
    return next.handle();
  }
}

/** A new version's form: the upload's parser and limits, with the version's own text fields. */
@Injectable()
export class PluginVersionUploadInterceptor extends PluginUploadInterceptor {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super(config);
    this.rules.namedFields = { names: VERSION_FIELDS, message: INVALID_METADATA };
  }
}
