import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // vitest leaves out every `dist/` folder by default; only the build output is left out here,
    // so the suite that runs the bundle (test/dist/) is found
    exclude: [...configDefaults.exclude.filter((pattern) => pattern !== "**/dist/**"), "dist/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // one file at a time: the crash test drives a child process with a storm of
    // requests, and on 2 cores parallel files would starve it and each other
    fileParallelism: false
  }
})
