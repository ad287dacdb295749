/** The answers of the logins and the password change, stated once (docs/accounts-security.md lists them). */
export const LOGIN_MESSAGES = {
  notFound: 'Login not found',
  missingCurrent: 'Missing current password value',
  // The register form's messages, for the same rules.
  missingPassword: 'Missing password value',
  missingConfirm: 'Missing confirm password value',
  mismatch: "Password doesn't match",
  weak: 'Choose a strong password',
  wrongCurrent: 'Current password is incorrect',
  locked: 'The account is locked: set a new password through the mailed one-time password (/password-reset)',
  changedMeanwhile: 'The password was changed by another request meanwhile; nothing was changed',
} as const;
