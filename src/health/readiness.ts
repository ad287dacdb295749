import { Injectable } from '@nestjs/common';

/** Whether this replica still wants new requests: false from SIGTERM on (see graceful-shutdown.ts). */
@Injectable()
export class Readiness {
  private stopping = false;

  get isStopping(): boolean {
    return this.stopping;
  }

  /** From here on /health/ready answers 503, whatever its checks say. */
  stop(): void {
    this.stopping = true;
  }
}
