import { expect, test } from 'bun:test'
import { gcPacer, markGarbage } from '../../../infrastructure/runtime/gc-pacer.ts'

// The memory pacer (infrastructure/runtime/gc-pacer.ts): a collection every `everyBytes` that flow,
// and one more once the flow pauses. The collection is counted, not run.

const MB = 1024 * 1024

/** A pacer whose own collections are counted, and a stream's collection (`mark`) counted apart. */
function counted(idle: { afterMs: number; minBytes: number } | null) {
  let collections = 0
  let marked = 0
  const pacer = gcPacer(
    8 * MB,
    () => {
      collections++
    },
    idle,
  )
  const mark = () => {
    marked++
  }
  return { pacer, collections: () => collections, mark, marked: () => marked }
}

test('a collection each time 8 MB went past, none before', () => {
  const { pacer, collections } = counted(null)
  for (let i = 0; i < 7; i++) pacer.count(MB)
  expect(collections()).toBe(0)
  pacer.count(MB)
  expect(collections()).toBe(1)
  for (let i = 0; i < 16; i++) pacer.count(MB)
  expect(collections()).toBe(3)
})

test('once the flow pauses, one more collection of what went past since the last', async () => {
  const { pacer, collections } = counted({ afterMs: 40, minBytes: MB })
  pacer.count(2 * MB)
  expect(collections()).toBe(0)
  await Bun.sleep(100)
  expect(collections()).toBe(1)
  // Nothing went past since: the pause does not collect again.
  await Bun.sleep(100)
  expect(collections()).toBe(1)
})

test('not while the flow goes on, however long; then once', async () => {
  const { pacer, collections } = counted({ afterMs: 40, minBytes: MB })
  for (let i = 0; i < 15; i++) {
    pacer.count(MB / 4)
    await Bun.sleep(10)
  }
  expect(collections()).toBe(0)
  await Bun.sleep(100)
  expect(collections()).toBe(1)
})

test('no pause collection for less than its minimum, or without one set', async () => {
  const small = counted({ afterMs: 20, minBytes: MB })
  small.pacer.count(MB - 1)
  const none = counted(null)
  none.pacer.count(4 * MB)
  await Bun.sleep(80)
  expect(small.collections()).toBe(0)
  expect(none.collections()).toBe(0)
  // The bytes stay counted: reaching the minimum later collects at the next pause.
  small.pacer.count(1)
  await Bun.sleep(80)
  expect(small.collections()).toBe(1)
})

test('a collection at 8 MB resets what the pause would collect', async () => {
  const { pacer, collections } = counted({ afterMs: 40, minBytes: MB })
  pacer.count(8 * MB)
  expect(collections()).toBe(1)
  await Bun.sleep(100)
  expect(collections()).toBe(1)
})

test('not while work is held, however long its pause; once, a pause after its release', async () => {
  const { pacer, collections } = counted({ afterMs: 30, minBytes: MB })
  const first = pacer.hold()
  const second = pacer.hold()
  pacer.count(2 * MB)
  await Bun.sleep(90)
  first()
  await Bun.sleep(90)
  expect(collections()).toBe(0)
  second()
  // Released twice is released once.
  second()
  expect(collections()).toBe(0)
  await Bun.sleep(90)
  expect(collections()).toBe(1)
})

test('a pause collection leaves the 8 MB cadence where it was', async () => {
  const { pacer, collections } = counted({ afterMs: 30, minBytes: MB })
  pacer.count(2 * MB)
  await Bun.sleep(90)
  expect(collections()).toBe(1)
  pacer.count(6 * MB - 1)
  expect(collections()).toBe(1)
  pacer.count(1)
  expect(collections()).toBe(2)
})

test("a stream's own collection runs at the cadence; the pause collection stays the pacer's", async () => {
  const { pacer, collections, mark, marked } = counted({ afterMs: 40, minBytes: MB })
  for (let i = 0; i < 9; i++) pacer.count(MB, mark)
  expect(marked()).toBe(1)
  expect(collections()).toBe(0)
  await Bun.sleep(100)
  // The pause after the stream collects with the pacer's own (full) collection.
  expect(collections()).toBe(1)
  expect(marked()).toBe(1)
})

test("a window with any byte counted without the stream's collection gets the pacer's own", () => {
  const { pacer, collections, mark, marked } = counted(null)
  // The intake's pieces, then the stream crossing 8 MB: the pieces' garbage wants the full one.
  pacer.count(MB)
  for (let i = 0; i < 7; i++) pacer.count(MB, mark)
  expect(collections()).toBe(1)
  expect(marked()).toBe(0)
  // The next window holds the stream's bytes only.
  for (let i = 0; i < 8; i++) pacer.count(MB, mark)
  expect(collections()).toBe(1)
  expect(marked()).toBe(1)
})

test('markGarbage collects what nothing reaches any more', async () => {
  const finalized: string[] = []
  const registry = new FinalizationRegistry<string>((name) => finalized.push(name))
  // Created in a function of its own, so no register or stack slot of this one keeps it.
  ;(() => {
    registry.register({ payload: new Array(1000).fill('x') }, 'dropped')
  })()
  for (let i = 0; i < 20 && finalized.length === 0; i++) {
    markGarbage()
    // Finalization callbacks run on a later turn.
    await Bun.sleep(10)
  }
  expect(finalized).toEqual(['dropped'])
})
