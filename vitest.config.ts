import { configDefaults, defineConfig } from "vitest/config"

// vitest leaves out every `dist/` folder by default; only the build output is left out here,
// so the suite that runs the bundle (test/dist/) is found
const exclude = [...configDefaults.exclude.filter((pattern) => pattern !== "**/dist/**"), "dist/**"]

// Files that time a child process, a browser, a storm of requests or a dropped database: run one at a time,
// after the rest, so a neighbour's load cannot starve them.
const alone = [
  "test/dist/**/*.test.ts",
  "test/ops/**/*.test.ts",
  "test/browser/**/*.test.ts",
  "test/webhooks/crash.test.ts",
  "test/knowledge/processes.test.ts",
  "test/knowledge/broken-files.test.ts",
  "test/queue/terminated.test.ts",
  "test/queue/outage.test.ts",
  "test/widget/handoff.test.ts",
  "test/http/startup.test.ts",
  "test/http/drain.test.ts",
  "test/http/lingering-close.test.ts"
]

// Files that never open a database (pure functions, layers without one, documents) and the browser suites (pages
// whose behaviour does not depend on the database behind the API, which every other suite covers on both): CI's
// second pass, on PostgreSQL, sets DATABASE_TESTS_ONLY and leaves them out.
const databaseIndependent = [
  "test/browser/**/*.test.ts",
  "test/architecture/imports.test.ts",
  "test/config/ai-config.test.ts",
  "test/config/observability-config.test.ts",
  "test/config/shares-config.test.ts",
  "test/conversations/openai-answer.test.ts",
  "test/conversations/reply-error.test.ts",
  "test/crawls/discovery.test.ts",
  "test/db/frozen-migrations.test.ts",
  "test/docs/readme.test.ts",
  "test/docs/reference.test.ts",
  "test/http/endpoints.test.ts",
  "test/http/refusals-declared.test.ts",
  "test/knowledge/chunk.test.ts",
  "test/knowledge/phases.test.ts",
  "test/layers/ai-local.test.ts",
  "test/layers/ai-openai.test.ts",
  "test/layers/decoders.test.ts",
  "test/layers/file-storage.test.ts",
  "test/layers/ids.test.ts",
  "test/layers/ocr.test.ts",
  "test/layers/ratelimit-memory.test.ts",
  "test/net/fetcher.test.ts",
  "test/net/url-policy.test.ts",
  "test/ops/bundle-check.test.ts",
  "test/queue/slots.test.ts",
  "test/training/audio-duration.test.ts"
]
if (process.env.DATABASE_TESTS_ONLY === "1") exclude.push(...databaseIndependent)

const shared = { testTimeout: 60_000, hookTimeout: 120_000 }

export default defineConfig({
  test: {
    // two files at a time in the first group (each builds its own database), then the timed ones alone
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...exclude, ...alone],
          sequence: { groupOrder: 0 },
          ...shared
        }
      },
      {
        test: {
          name: "alone",
          include: alone,
          exclude,
          sequence: { groupOrder: 1 },
          // one process runs these files one after the other (a project cannot set fileParallelism)
          poolOptions: { forks: { singleFork: true } },
          ...shared
        }
      }
    ]
  }
})
