import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MultipartFieldsMiddleware } from '../common/multipart-fields.middleware';
import { ConfigurationItem } from './configuration-item.entity';
import { ConfigurationController } from './configuration.controller';
import { ConfigurationRepository } from './configuration.repository';
import { ConfigurationService } from './configuration.service';

@Module({
  imports: [TypeOrmModule.forFeature([ConfigurationItem])],
  controllers: [ConfigurationController],
  providers: [ConfigurationService, ConfigurationRepository],
  exports: [ConfigurationService],
})
export class ConfigurationModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Request arguments may come as multipart form fields too, as on the account endpoints.
    consumer.apply(MultipartFieldsMiddleware).forRoutes(ConfigurationController);
  }
}
