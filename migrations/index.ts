import { CreateAccounts1763683200000 } from './1763683200000-CreateAccounts';
import { CreateConfigurationSessionsTargets1763683300000 } from './1763683300000-CreateConfigurationSessionsTargets';
import { CreateUserPlugins1763683400000 } from './1763683400000-CreateUserPlugins';
import { AccountKeysOtpLifecycle1763683500000 } from './1763683500000-AccountKeysOtpLifecycle';
import { CreateOutbox1763683600000 } from './1763683600000-CreateOutbox';
import { ReviewKeepsUpdatedAt1763683700000 } from './1763683700000-ReviewKeepsUpdatedAt';
import { PluginVersionAndTags1763683800000 } from './1763683800000-PluginVersionAndTags';
import { PluginFileMissing1763683850000 } from './1763683850000-PluginFileMissing';
import { CreateInstallation1763683860000 } from './1763683860000-CreateInstallation';
import { PluginLifecycle1763692000000 } from './1763692000000-PluginLifecycle';
import { CreatePluginRechecks1763693000000 } from './1763693000000-CreatePluginRechecks';
import { CatalogueSearchIndex1763694000000 } from './1763694000000-CatalogueSearchIndex';
import { PluginNameKey1763695000000 } from './1763695000000-PluginNameKey';
import { AccountLock1763696000000 } from './1763696000000-AccountLock';
import { CatalogueCounts1763697000000 } from './1763697000000-CatalogueCounts';
import { ActivationLinksByAddress1763698000000 } from './1763698000000-ActivationLinksByAddress';
import { CatalogueSearchRuns1763699400000 } from './1763699400000-CatalogueSearchRuns';
import { CredentialGeneration1763700000000 } from './1763700000000-CredentialGeneration';
import { PluginVersionReads1763701000000 } from './1763701000000-PluginVersionReads';
import { UserMailbox1763702000000 } from './1763702000000-UserMailbox';
import { CreatePluginTestRuns1763703000000 } from './1763703000000-CreatePluginTestRuns';
import { PluginTestRunSummary1763704000000 } from './1763704000000-PluginTestRunSummary';
import { FilesByDigest1763705000000 } from './1763705000000-FilesByDigest';
import { CreatePersonalAccessTokens1763706000000 } from './1763706000000-CreatePersonalAccessTokens';
import { LoginDetails1763707000000 } from './1763707000000-LoginDetails';
import { CreateSecondFactor1763708000000 } from './1763708000000-CreateSecondFactor';
import { PluginVersionWarnings1763709000000 } from './1763709000000-PluginVersionWarnings';

/** Every migration, oldest first. Listed by hand so the same list runs from src and dist. */
export const migrations = [
  CreateAccounts1763683200000,
  CreateConfigurationSessionsTargets1763683300000,
  CreateUserPlugins1763683400000,
  AccountKeysOtpLifecycle1763683500000,
  CreateOutbox1763683600000,
  ReviewKeepsUpdatedAt1763683700000,
  PluginVersionAndTags1763683800000,
  PluginFileMissing1763683850000,
  CreateInstallation1763683860000,
  PluginLifecycle1763692000000,
  CreatePluginRechecks1763693000000,
  CatalogueSearchIndex1763694000000,
  PluginNameKey1763695000000,
  AccountLock1763696000000,
  CatalogueCounts1763697000000,
  ActivationLinksByAddress1763698000000,
  CatalogueSearchRuns1763699400000,
  CredentialGeneration1763700000000,
  PluginVersionReads1763701000000,
  UserMailbox1763702000000,
  CreatePluginTestRuns1763703000000,
  PluginTestRunSummary1763704000000,
  FilesByDigest1763705000000,
  CreatePersonalAccessTokens1763706000000,
  LoginDetails1763707000000,
  CreateSecondFactor1763708000000,
  PluginVersionWarnings1763709000000,
];
