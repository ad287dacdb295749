import { parseEnvFile } from './environment';

describe('.env reader', () => {
  it('reads NAME=value lines, export, comments and quotes', () => {
    const file = parseEnvFile(
      [
        '# a developer’s settings',
        'PORT=8010',
        '  export LOG_LEVEL=debug  ',
        'SMTP_FROM="SVC <svc@example.com>" # the sender',
        "JWT_SECRET='a#b'",
        'PASSWORD_PATTERN=`^x$`',
        'KEY="-----BEGIN',
        'END-----"',
        'ESCAPED="one\\ntwo"',
        'EMPTY=',
        'UNQUOTED=a b # comment',
        '',
      ].join('\n'),
    );
    expect(file).toEqual({
      values: {
        PORT: '8010',
        LOG_LEVEL: 'debug',
        SMTP_FROM: 'SVC <svc@example.com>',
        JWT_SECRET: 'a#b',
        PASSWORD_PATTERN: '^x$',
        KEY: '-----BEGIN\nEND-----',
        ESCAPED: 'one\ntwo',
        EMPTY: '',
        UNQUOTED: 'a b',
      },
      ignored: [],
    });
  });

  it('names each line it cannot use, and still reads the next one', () => {
    const file = parseEnvFile(
      ['PORT=1', 'junk without equals', 'HOST=0.0.0.0', 'SMTP.HOST=x', '1X=2', 'A="b" c', 'LAST=ok'].join(
        '\r\n',
      ),
    );
    expect(file.values).toEqual({ PORT: '1', HOST: '0.0.0.0', LAST: 'ok' });
    expect(file.ignored).toEqual([
      'line 2 has no "=" (NAME=value expected)',
      'line 4: the name before "=" is not letters, digits and _ (not starting with a digit)',
      'line 5: the name before "=" is not letters, digits and _ (not starting with a digit)',
      'line 6: text after the closing " of A\'s value',
    ]);
  });

  it('an unclosed quote: the value and the lines after it are ignored, and said so', () => {
    const file = parseEnvFile('PORT=1\nJWT_SECRET="abc\nHOST=x\n');
    expect(file.values).toEqual({ PORT: '1' });
    expect(file.ignored).toEqual([
      'line 2: the value\'s " is never closed (the lines after it were ignored too)',
    ]);
  });
});
