import { escapeHtml } from '../mail/html';
import { PASSWORD_RESET_PATH } from '../users/account-paths';

/**
 * The pages a person opens from a mail, as plain HTML. Everything that is not a literal of
 * this file goes through escapeHtml; the activation key is never written into a page (its
 * form posts to the page's own address). The only script is PAGE_SCRIPT, loaded from
 * ASSET_PATH, so the Content-Security-Policy needs no 'unsafe-inline'.
 */
export const ASSET_PATH = '/pages';
export const RESET_PATH = PASSWORD_RESET_PATH;
export const DOCS_PATH = '/api/docs';

/** Text for a page: literal HTML of this file, or escaped text. */
type Html = { readonly html: string };
const html = (text: string): Html => ({ html: text });
const text = (value: string): Html => html(escapeHtml(value));

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} - svc</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${ASSET_PATH}/pages.css">
</head>
<body>
  <main>
${body}
  </main>
  <footer>
    <a href="${DOCS_PATH}">API documentation</a> &middot; <a href="${RESET_PATH}">Reset a password</a> &middot; <a href="/">svc</a>
  </footer>
  <script src="${ASSET_PATH}/pages.js"></script>
</body>
</html>
`;
}

function section(title: string, paragraphs: Html[], extra = ''): string {
  return `    <h1>${escapeHtml(title)}</h1>
${paragraphs.map((paragraph) => `    <p>${paragraph.html}</p>`).join('\n')}
${extra}`;
}

export function homePage(): string {
  return layout(
    'svc-api',
    section('svc-api', [
      text('This is the web API of the security-assessment framework. Its endpoints are under /api/v1.'),
      html(
        `The <a href="${DOCS_PATH}">API documentation</a> describes every endpoint and lets you try them; ` +
          `the OpenAPI document is at <a href="/api/docs-json">/api/docs-json</a>.`,
      ),
      html(`Forgot your password? <a href="${RESET_PATH}">Reset it here</a>.`),
    ]),
  );
}

/** The page the mail links: one button, so that a mail scanner fetching the link confirms nothing. */
export function confirmPage(): string {
  return layout(
    'Confirm your email address',
    section(
      'Confirm your email address',
      [text('Press the button to confirm your email address and activate your account.')],
      `    <form method="post" id="confirm-email">
      <button type="submit">Confirm my email address</button>
    </form>
`,
    ),
  );
}

/**
 * The activation mail's second link: whoever registered may not be the owner of the address,
 * and the owner takes the account without the password that person chose.
 */
export function claimPage(): string {
  return layout(
    'Secure your email address',
    section(
      'Secure your email address',
      [
        text(
          'Someone registered an account with your email address. If it was not you, press the button: ' +
            'your address is confirmed and the account is yours, without the password whoever registered it chose, ' +
            'and every login made with that password is signed out.',
        ),
        text(
          'Then set your own password: we mail you a one-time password to this address for it. ' +
            'If you did register the account yourself, use the other link of the mail instead and keep your password.',
        ),
      ],
      `    <form method="post" id="claim-email">
      <button type="submit">I did not register: secure this address</button>
    </form>
`,
    ),
  );
}

/**
 * With `passwordToSet`, the account has no password now: one chosen before this confirmation
 * was cleared (whoever registered the address may not be its owner), and the owner sets one.
 * `webClient`: FRONTEND_URL, the framework's web client, where people log in; else the API is the place.
 */
export function verifiedPage(passwordToSet: boolean, webClient: string | null): string {
  const logIn =
    webClient === null
      ? html(
          'You can log in now, with the API: <code>POST /api/v1/login/</code> with your username or email and ' +
            `password (the <a href="${DOCS_PATH}">API documentation</a> shows how, and lets you try it).`,
        )
      : html(`You can <a href="${escapeHtml(webClient)}" id="log-in">log in now</a>.`);
  if (!passwordToSet) {
    return layout(
      'Email address confirmed',
      section('Email address confirmed', [
        text('Thank you: your email address is confirmed and your account is active.'),
        logIn,
      ]),
    );
  }
  return layout(
    'Email address confirmed',
    section('Email address confirmed: now set your password', [
      text('Thank you: your email address is confirmed and your account is active.'),
      text(
        'Your account has no password yet. A password chosen when the account was registered is not kept, ' +
          'because anyone could have registered your address before you confirmed it.',
      ),
      html(
        `Set your password on the <a href="${RESET_PATH}">password reset page</a>: ask for a one-time password ` +
          '(it is mailed to this address), then enter it with your new password.',
      ),
      logIn,
    ]),
  );
}

/** An expired link names the address (as the API's answer does) and offers a new link for it. */
export function expiredPage(email: string): string {
  return layout(
    'This link has expired',
    section(
      'This link has expired',
      [
        text('Activation links are valid for 1 hour, and this one is older.'),
        html(`You can ask for a new link, sent to <strong>${escapeHtml(email)}</strong>:`),
      ],
      `    <form method="post" action="/api/v1/generate/confirm_email/" data-api="resend-link">
      <input type="hidden" name="email" value="${escapeHtml(email)}">
      <button type="submit">Send me a new link</button>
      <p class="result" role="status" data-result></p>
    </form>
`,
    ),
  );
}

export function invalidLinkPage(): string {
  return layout(
    'This link is not valid',
    section(
      'This link is not valid',
      [
        text(
          'The link is unknown, was already used, or was replaced by a newer link. ' +
            'If you confirmed your email address already, your account is active and you can log in.',
        ),
        text('Otherwise ask for a new link and open the newest mail:'),
      ],
      `    <form method="post" action="/api/v1/generate/confirm_email/" data-api="resend-link" id="resend-link">
      <label>Email address <input name="email" type="email" autocomplete="email" required maxlength="254"></label>
      <button type="submit">Send me a new link</button>
      <p class="result" role="status" data-result></p>
    </form>
`,
    ),
  );
}

export function resetPage(): string {
  return layout(
    'Reset your password',
    section(
      'Reset your password',
      [
        text(
          'First we send a one-time password (OTP) to the email address of your account; ' +
            'then you enter it here with your new password. The OTP is valid for 5 minutes.',
        ),
      ],
      `    <form method="post" action="/api/v1/generate/otp/" data-api="request-otp" id="request-otp">
      <h2>1. Ask for an OTP</h2>
      <label>Username or email address <input name="emailOrUsername" autocomplete="username" required maxlength="254"></label>
      <button type="submit">Send me an OTP</button>
      <p class="result" role="status" data-result></p>
    </form>
    <form method="post" action="/api/v1/new-password/" data-api="new-password" id="new-password">
      <h2>2. Choose a new password</h2>
      <label>Username or email address <input name="emailOrUsername" autocomplete="username" required maxlength="254"></label>
      <label>OTP from the mail <input name="otp" autocomplete="one-time-code" inputmode="numeric" required maxlength="16"></label>
      <label>New password <input name="password" type="password" autocomplete="new-password" required maxlength="128"></label>
      <label>New password again <input name="confirm_password" type="password" autocomplete="new-password" required maxlength="128" data-same-as="password"></label>
      <p class="hint">At least 8 characters, with a lower-case letter, an upper-case letter, a digit and a symbol.</p>
      <button type="submit">Change my password</button>
      <p class="result" role="status" data-result></p>
    </form>
`,
    ),
  );
}

export function unavailablePage(): string {
  return layout(
    'Service unavailable',
    section('Service unavailable', [
      text('The service cannot answer right now. Please try again in a moment.'),
    ]),
  );
}

export function errorPage(errorId: string): string {
  return layout(
    'Something went wrong',
    section('Something went wrong', [
      text(`The service failed to answer. If you report it, mention the error id ${errorId}.`),
    ]),
  );
}
