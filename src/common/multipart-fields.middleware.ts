import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import multer from 'multer';

/** Text fields of a multipart/form-data body, as small as account parameters are; files are refused. */
const parseFields = multer({ limits: { fields: 20, fieldSize: 4096, parts: 20, files: 0 } }).none();

const parsed = new WeakSet<Request>();

/** Safe to apply more than once to a route: the body stream can be read only once. */
@Injectable()
export class MultipartFieldsMiddleware implements NestMiddleware {
  use(request: Request, response: Response, next: NextFunction): void {
    if (!request.is('multipart/form-data') || parsed.has(request)) return next();
    parsed.add(request);
    parseFields(request, response, next);
  }
}
