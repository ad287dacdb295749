import { activationLink } from './activation-link';

const KEY = '0b6f9c8e-3a51-4c2e-9d7a-1f2e3d4c5b6a';
const base = { serverAddr: 'svc.example.test', frontendPort: 8009, frontendUrl: null, port: 8009 };

describe('activationLink', () => {
  it('has the shape of the spec, on the configured host and port', () => {
    expect(activationLink(base, KEY, () => 1234)).toBe(`http://svc.example.test:8009/email-verify/${KEY}`);
  });

  it('takes the port the server listens on when PORT=0 left the choice to the system', () => {
    const config = { ...base, port: 0, frontendPort: 0 };
    expect(activationLink(config, KEY, () => 41234)).toBe(
      `http://svc.example.test:41234/email-verify/${KEY}`,
    );
  });

  it('goes under FRONTEND_URL when one is set', () => {
    const config = { ...base, frontendUrl: 'https://svc.example.com/app' };
    expect(activationLink(config, KEY, () => 1234)).toBe(`https://svc.example.com/app/email-verify/${KEY}`);
  });
});
