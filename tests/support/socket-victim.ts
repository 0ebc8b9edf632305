import { msg, WireClient } from './pg-wire.ts'

// A client of the service's PGlite socket that takes the lock and keeps it until the test kills it
// with SIGKILL: `transaction` is inside BEGIN with a row inserted, `extended` is mid extended-query
// (Parse/Bind/Execute and a Flush, no Sync), its insert in the sequence's implicit transaction.
// Neither insert may survive the kill. Prints `holding` once it holds the lock.

const [path, mode, label] = process.argv.slice(2) as [string, 'transaction' | 'extended', string]
// The lock may be busy with a burst of other clients for a while.
const client = await WireClient.connect(path, { timeoutMs: 60_000 })
const insert = `insert into stress_probe values ('${label}')`
if (mode === 'transaction') {
  client.send(msg.query('BEGIN'), msg.query(insert))
  await client.until('Z', 60_000)
  await client.until('Z', 60_000)
} else {
  client.send(msg.parse(insert), msg.bind(), msg.execute(), msg.flush())
  await client.until('C', 60_000)
}
console.log('holding')
await new Promise(() => {})
