import { CreateAccounts1763683200000 } from './1763683200000-CreateAccounts';

/** Every migration, oldest first. Listed by hand so the same list runs from src and dist. */
export const migrations = [CreateAccounts1763683200000];
