/**
 * The script and style of the pages (templates.ts), served as files of their own from
 * ASSET_PATH so that the Content-Security-Policy stays `script-src 'self'` without
 * 'unsafe-inline'. Kept here as text rather than as files beside the build, so the compiled
 * app (dist/, the Docker image) carries them without a copy step.
 *
 * The script only enhances: every form posts to its public API endpoint without it too.
 * It reads the top-level `status` and `message` of the account answers, shows plain words
 * for the messages it knows (the API's own text otherwise), and writes only textContent.
 */
export const PAGE_SCRIPT = `'use strict';
(function () {
  var PLAIN = {
    'Email send successful':
      'If an account has this address, a new activation link is on its way to it. The link is valid for 1 hour.',
    'Missing email value': 'The email address is missing.',
    'Otp Send Successful':
      'We have sent an OTP to the email address of the account. It is valid for 5 minutes: enter it below.',
    "Username / Email doesn't exist": 'No account has this username or email address.',
    'Invalid OTP':
      'This OTP is not right or has expired. Check the newest mail, or ask for a new OTP.',
    'Choose a strong password':
      'This password is too weak. Use at least 8 characters with a lower-case letter, an upper-case letter, a digit and a symbol.',
    'Password Change Unsuccessful': 'The password was not changed: fill in every field.',
    'Password Change Successful':
      'Your password is changed. Log in with the new one; every earlier login has been signed out.',
    'Service unavailable': 'The service cannot answer right now. Please try again in a moment.',
  };

  function describe(response, body) {
    if (response.status === 429) {
      var wait = Number(response.headers.get('Retry-After'));
      return wait > 0
        ? 'Too many attempts. Please try again in ' + wait + ' seconds.'
        : 'Too many attempts. Please try again later.';
    }
    var message = body && typeof body.message === 'string' ? body.message : '';
    if (Object.prototype.hasOwnProperty.call(PLAIN, message)) return PLAIN[message];
    if (message) return message;
    return 'The service answered HTTP ' + response.status + '. Please try again later.';
  }

  function show(form, state, words) {
    var result = form.querySelector('[data-result]');
    if (!result) return;
    result.textContent = words;
    result.className = 'result ' + state;
  }

  function fieldsOf(form) {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      // Only the check of the second password entry is the page's; the API does not take it.
      if (typeof value === 'string' && !form.querySelector('[name="' + name + '"][data-same-as]')) {
        params.append(name, value);
      }
    });
    return params;
  }

  function mismatch(form) {
    var checks = form.querySelectorAll('[data-same-as]');
    for (var i = 0; i < checks.length; i += 1) {
      var other = form.elements.namedItem(checks[i].getAttribute('data-same-as'));
      if (other && other.value !== checks[i].value) return true;
    }
    return false;
  }

  function after(form, ok) {
    var kind = form.getAttribute('data-api');
    if (ok && kind === 'request-otp') {
      var next = document.getElementById('new-password');
      if (next) {
        next.elements.namedItem('emailOrUsername').value = form.elements.namedItem('emailOrUsername').value;
        next.elements.namedItem('otp').focus();
      }
    }
    if (kind === 'new-password') {
      form.elements.namedItem('password').value = '';
      form.elements.namedItem('confirm_password').value = '';
    }
  }

  function submit(event) {
    var form = event.target;
    event.preventDefault();
    if (mismatch(form)) {
      show(form, 'fail', 'The two passwords are not the same.');
      return;
    }
    var button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    show(form, 'pending', 'Sending...');
    fetch(form.getAttribute('action'), {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: fieldsOf(form).toString(),
      credentials: 'same-origin',
      cache: 'no-store',
    })
      .then(function (response) {
        return response
          .json()
          .catch(function () {
            return null;
          })
          .then(function (body) {
            var ok = response.ok && body !== null && body.status === 'success';
            show(form, ok ? 'success' : 'fail', describe(response, body));
            after(form, ok);
          });
      })
      .catch(function () {
        show(form, 'fail', 'The service could not be reached. Please check your connection and try again.');
      })
      .then(function () {
        if (button) button.disabled = false;
      });
  }

  var forms = document.querySelectorAll('form[data-api]');
  for (var i = 0; i < forms.length; i += 1) forms[i].addEventListener('submit', submit);
})();
`;

export const PAGE_STYLE = `body {
  font-family: system-ui, sans-serif;
  line-height: 1.5;
  color: #1d1d1f;
  background: #f6f6f8;
  margin: 0;
}
main, footer {
  max-width: 36rem;
  margin: 2rem auto;
  padding: 0 1rem;
}
main {
  background: #fff;
  border-radius: 8px;
  padding: 1.5rem 2rem;
  box-shadow: 0 1px 3px rgba(0, 0, 0, 0.1);
}
h1 { font-size: 1.5rem; margin-top: 0; }
h2 { font-size: 1.1rem; }
form { margin: 1.5rem 0; }
label { display: block; margin: 0.75rem 0; }
input { display: block; width: 100%; box-sizing: border-box; padding: 0.4rem; font: inherit; margin-top: 0.25rem; }
button { font: inherit; padding: 0.5rem 1rem; cursor: pointer; }
.hint { font-size: 0.9rem; color: #555; }
.result:empty { display: none; }
.result { padding: 0.5rem 0.75rem; border-radius: 4px; }
.result.success { background: #e7f6ea; }
.result.fail { background: #fdecec; }
.result.pending { background: #f0f0f3; }
footer { font-size: 0.9rem; color: #555; }
code { overflow-wrap: anywhere; }
`;
