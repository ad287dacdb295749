import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { createHash, createPrivateKey, createPublicKey, KeyObject, sign } from 'node:crypto';
import { AuditLog } from '../audit/audit-log.service';
import { canonicalJson } from '../common/canonical-json';
import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Transactions } from '../database/transactions';
import type { ManifestKey, PluginManifest } from './dto/plugin-lifecycle.dto';
import { PluginsRepository } from './plugins.repository';

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

  constructor(
    private readonly plugins: PluginsRepository,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.privateKey = createPrivateKey(config.pluginManifestKey);
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

  async manifest(): Promise<PluginManifest> {
    const plugins = (await this.plugins.manifestEntries()).map(({ id, name, version, sha256 }) => ({
      id,
      name,
      version,
      sha256,
    }));
    const body = { generated_at: this.clock.now().toISOString(), plugins };
    const signature = sign(null, Buffer.from(canonicalJson(body), 'utf8'), this.privateKey).toString(
      'base64',
    );
    return { ...body, signature };
  }

  key(): ManifestKey {
    return { algorithm: 'Ed25519', public_key_pem: this.publicKeyPem, fingerprint: this.fingerprint };
  }
}
