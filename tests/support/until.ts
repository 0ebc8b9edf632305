/** Reads until `done` accepts the value (every 100 ms, 20 s at most): for work a job does later. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const value = await read()
    if (done(value)) return value
    await Bun.sleep(100)
  }
  throw new Error('timed out')
}
