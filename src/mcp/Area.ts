/** The MCP area as the composition root uses it: its program (the tools over the other areas' programs) and its API group. */
import { Authentication } from "../../schema/Auth.js"
import { McpHttp } from "./Http.js"
import { Mcp } from "./Mcp.js"

/** Needs the agents', knowledge, conversations' and tickets' programs (`Server.ts` provides them). */
export const Live = Mcp.Default

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = McpHttp
export const ApiServices = [Authentication, Mcp] as const
