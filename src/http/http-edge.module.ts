import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { MultipartFieldsGuard } from './multipart-fields.guard';

/**
 * The request edge's own step in Nest's lifecycle. Imported by the app after AuthModule:
 * global guards run in the order their modules were registered, and the form is read only
 * once the caller is authenticated.
 */
@Module({
  providers: [{ provide: APP_GUARD, useClass: MultipartFieldsGuard }],
})
export class HttpEdgeModule {}
