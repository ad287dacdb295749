import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { createHash, createPrivateKey, createPublicKey, KeyObject, sign } from 'node:crypto';
import { AuditLog } from '../../audit/audit-log.service';
import { canonicalJson } from '../../common/canonical-json';
import { Clock } from '../../common/clock';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Transactions } from '../../database/transactions';
import type { ManifestKey, PluginManifest } from '../dto/plugin-lifecycle.dto';
import { ManifestRepository } from './manifest.repository';

/**
 * The approved catalogue as the framework loads it, signed with Ed25519 over the canonical
 * JSON of every other member, so a loader that pinned the public key trusts the digests, and a
 * file whose digest is not listed is not loaded.
 */
@Injectable()
export class PluginManifestService implements OnApplicationBootstrap {
  private readonly logger = new Logger('PluginManifest');
  private readonly privateKey: KeyObject;
  private readonly publicKeyPem: string;
  /** sha256 of the raw public key, hex: how the audit log names a key. */
  readonly fingerprint: string;
  private readonly ttlSeconds: number;

  constructor(
    private readonly plugins: ManifestRepository,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.privateKey = createPrivateKey(config.pluginManifestKey);
    this.ttlSeconds = config.pluginManifestTtlSeconds;
    const publicKey = createPublicKey(this.privateKey);
    this.publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    this.fingerprint = createHash('sha256')
      .update(publicKey.export({ type: 'spki', format: 'der' }).subarray(-32))
      .digest('hex');
  }

  /** A key other than the last one recorded is a change of power: it is recorded, once, whichever replica starts first. */
  async onApplicationBootstrap(): Promise<void> {
    // Read first without the chain's lock: the key rarely changes, and a start that locks the
    // chain's hot row while other replicas append to it loses every try to them on Galera.
    if ((await this.recordedFingerprint(this.transactions.manager)) === this.fingerprint) return;
    await this.transactions.run(async (manager) => {
      await this.audit.lockChain(manager);
      const previous = await this.recordedFingerprint(manager);
      if (previous === this.fingerprint) return;
      await this.audit.append(manager, {
        actor: 'system',
        action: 'manifest_key_change',
        subject: 'manifest-key',
        details: { fingerprint: this.fingerprint, previous },
      });
      this.logger.log(
        `Plugin manifest signed with key ${this.fingerprint}${previous ? ` (was ${previous})` : ''}`,
      );
    });
  }

  private async recordedFingerprint(manager: EntityManager): Promise<string | null> {
    const last = await this.audit.latest(manager, 'manifest_key_change');
    return last ? ((JSON.parse(last.details) as { fingerprint?: string }).fingerprint ?? null) : null;
  }

  /**
   * `serial` is the audit chain's head count, read with the entries (see manifestSnapshot):
   * it never decreases, and every decision that changes the entries raises it, so a loader
   * that refuses a serial lower than the last it loaded cannot be fed a manifest from before a
   * revocation; `expires_at` bounds how long a manifest withheld from it stays loadable.
   */
  async manifest(): Promise<PluginManifest> {
    const { serial, entries } = await this.plugins.manifestSnapshot();
    const issuedAt = this.clock.now();
    const body = {
      serial,
      issued_at: issuedAt.toISOString(),
      // The name the manifest's first loaders read; the same instant as issued_at.
      generated_at: issuedAt.toISOString(),
      expires_at: new Date(issuedAt.getTime() + this.ttlSeconds * 1000).toISOString(),
      plugins: entries,
    };
    const signature = sign(null, Buffer.from(canonicalJson(body), 'utf8'), this.privateKey).toString(
      'base64',
    );
    return { ...body, signature };
  }

  key(): ManifestKey {
    return { algorithm: 'Ed25519', public_key_pem: this.publicKeyPem, fingerprint: this.fingerprint };
  }
}
