import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Controller()
class HelloController {
  @Get()
  hello() {
    return { ok: true };
  }
}
@Module({ controllers: [HelloController] })
export class AppModule {}

async function main() {
  const app = await NestFactory.create(AppModule);
  await app.listen(8009);
}
if (require.main === module) void main();
