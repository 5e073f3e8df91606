/**
 * `--import`ed into the bundle's server by `last-line.test.ts`: on SIGUSR2 an
 * error escapes every handler, as one from a library would (`ESCAPE=throw`:
 * thrown from an event handler; `ESCAPE=reject`: a promise nobody awaits).
 */
process.on("SIGUSR2", () => {
  if (process.env["ESCAPE"] === "reject") void Promise.reject(new Error("a promise a library left unawaited"))
  else throw new Error("thrown from a library's event handler")
})
