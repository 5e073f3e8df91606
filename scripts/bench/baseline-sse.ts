/**
 * The bare baseline of the replies benchmark: node:http writing a reply's
 * events as server-sent events, no framework, no database. `REPLY_FRAMES_FILE`
 * holds the frames to write (the service's own reply, captured first); with
 * `HOLD=1` it writes all but the last frame and keeps the stream open (for the
 * open-streams measure) until the process ends.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const frames: ReadonlyArray<string> = JSON.parse(readFileSync(process.env["REPLY_FRAMES_FILE"]!, "utf8"))
const hold = process.env["HOLD"] === "1"

createServer((req, res) => {
  if (req.url === "/readyz") {
    res.writeHead(200, { "content-type": "application/json" })
    return res.end('{"status":"ready"}')
  }
  req.resume()
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" })
    for (const frame of hold ? frames.slice(0, -1) : frames) res.write(frame)
    if (!hold) res.end()
  })
}).listen(Number(process.env["PORT"]), "127.0.0.1")
