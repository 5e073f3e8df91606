import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // one file at a time: the crash test drives a child process with a storm of
    // requests, and on 2 cores parallel files would starve it and each other
    fileParallelism: false
  }
})
