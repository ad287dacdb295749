import { Injectable } from '@nestjs/common';

/** Time as the service sees it; tests replace it to move time instead of sleeping. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}
