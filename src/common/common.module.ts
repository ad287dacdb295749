import { Global, Module } from '@nestjs/common';
import { Clock } from './clock';
import { StartupWork } from './startup-work';

@Global()
@Module({ providers: [Clock, StartupWork], exports: [Clock, StartupWork] })
export class CommonModule {}
