/**
 * `node --import` of the bundle under test when DIST_LOADS_FILE is set: every
 * file the process (and its worker threads) loads is appended to that file, so
 * CI can tell which of the bundle's lazy chunks no flow ever loaded.
 */
import { register } from "node:module"

if (process.env["DIST_LOADS_FILE"]) register(new URL("./recordLoadsHooks.mjs", import.meta.url), { data: { file: process.env["DIST_LOADS_FILE"] } })
