import { preparePgliteTemplate } from './test-db.ts'

// Run once before a PGlite test pass, so parallel test workers do not all build the template at once.
await preparePgliteTemplate()
