/**
 * What both bare baselines share: their settings from the environment, a pg
 * Pool sized like the service's, the key format, and JSON replies. Nothing of
 * the service's own code, so the baselines stay bare.
 */
import type { ServerResponse } from "node:http"
import { pg } from "./lib.js"

export const port = Number(process.env["PORT"])
const databaseUrl = process.env["DATABASE_URL"]
if (!Number.isInteger(port) || databaseUrl === undefined) throw new Error("PORT and DATABASE_URL are required")

// same pool size as the service's layerPg default
export const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })

export const wellFormedKey = /^(sk|widget_pk|pk)_(test|live)_[A-Za-z0-9]{16,128}$/

export const send = (res: ServerResponse, status: number, body: unknown, requestId: string) => {
  const json = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json), "request-id": requestId })
  res.end(json)
}

export const fail = (res: ServerResponse, status: number, code: string, requestId: string) =>
  send(res, status, { error: { code }, meta: { request_id: requestId } }, requestId)
