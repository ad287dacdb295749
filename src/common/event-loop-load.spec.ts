import { eventLoopLoad } from './event-loop-load';

describe('eventLoopLoad', () => {
  it('counts the event loop busy after a stretch of work, and quiet after a stretch of waiting', async () => {
    const loopBusy = eventLoopLoad();
    const until = performance.now() + 150;
    while (performance.now() < until); // the event loop held, as by requests
    expect(loopBusy()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(loopBusy()).toBe(false);
  });
});
