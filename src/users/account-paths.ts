/**
 * The service's own page where an owner sets a password through the OTP mail (src/pages
 * serves it). Named here because the mails, the pages and svc-admin all point people to it.
 */
export const PASSWORD_RESET_PATH = '/password-reset';
