import { mailboxOf } from './mailbox';

describe('mailboxOf', () => {
  it.each([
    // case and surrounding space
    ['alice@example.com', 'alice@example.com'],
    ['  Alice@Example.COM ', 'alice@example.com'],
    ['ALICE@EXAMPLE.COM', 'alice@example.com'],
    // +tags, on every provider
    ['alice+x@example.com', 'alice@example.com'],
    ['Alice+X@Example.com', 'alice@example.com'],
    ['alice+@example.com', 'alice@example.com'],
    ['alice+a+b@example.com', 'alice@example.com'],
    ['alice++@example.com', 'alice@example.com'],
    ['+tag@example.com', '+tag@example.com'],
    ['+@example.com', '+@example.com'],
    // dots count elsewhere
    ['a.lice@example.com', 'a.lice@example.com'],
    ['a.lice+x@example.com', 'a.lice@example.com'],
    // gmail: dots dropped, googlemail is gmail
    ['a.l.i.c.e@gmail.com', 'alice@gmail.com'],
    ['A.Lice+News@GMail.com', 'alice@gmail.com'],
    ['alice@googlemail.com', 'alice@gmail.com'],
    ['a.lice+x@GoogleMail.com', 'alice@gmail.com'],
    ['...@gmail.com', '...@gmail.com'],
    ['alice@mail.gmail.com', 'alice@mail.gmail.com'],
    ['alice@gmail.com.', 'alice@gmail.com.'],
    // quoted local parts are left whole
    ['"alice+x"@example.com', '"alice+x"@example.com'],
    ['"a.lice"@gmail.com', '"a.lice"@gmail.com'],
    ['"a@b"+x@example.com', '"a@b"+x@example.com'],
    // the last @ separates the domain
    ['a@b@example.com', 'a@b@example.com'],
    // IDN and punycode domains are kept as given (no conversion between the two forms)
    ['alice+x@bücher.example', 'alice@bücher.example'],
    ['alice+x@xn--bcher-kva.example', 'alice@xn--bcher-kva.example'],
    ['Émile+x@Example.com', 'émile@example.com'],
    ['E\u0301mile@example.com', 'émile@example.com'],
    // not addresses: their identity key
    ['alice', 'alice'],
    ['Alice+x', 'alice+x'],
    ['@example.com', '@example.com'],
    ['alice@', 'alice@'],
    ['', ''],
  ])('%j reaches %j', (address, mailbox) => {
    expect(mailboxOf(address)).toBe(mailbox);
  });

  it('keeps people apart whose addresses differ otherwise', () => {
    expect(mailboxOf('alice@example.com')).not.toBe(mailboxOf('alice@example.org'));
    expect(mailboxOf('alice@example.com')).not.toBe(mailboxOf('alicex@example.com'));
    expect(mailboxOf('émile@example.com')).not.toBe(mailboxOf('emile@example.com'));
    expect(mailboxOf('a.lice@outlook.com')).not.toBe(mailboxOf('alice@outlook.com'));
  });

  it('is idempotent: a mailbox reaches itself', () => {
    for (const address of ['A.Lice+x@GoogleMail.com', 'Bob+1@Example.com', '"q+x"@example.com']) {
      expect(mailboxOf(mailboxOf(address))).toBe(mailboxOf(address));
    }
  });
});
