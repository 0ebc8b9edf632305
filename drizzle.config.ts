import { defineConfig } from 'drizzle-kit'

// `bun run db:generate` writes a new migration from the schema; migrations are committed and applied
// at start (infrastructure/db/migrate.ts).
export default defineConfig({
  dialect: 'postgresql',
  schema: './infrastructure/db/schema/*.ts',
  out: './infrastructure/db/migrations',
  casing: 'snake_case',
})
