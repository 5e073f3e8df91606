/** Placeholder until the admin RPC lands: no admin routes. */
import * as Layer from "effect/Layer"

export const AdminRoutes = Layer.empty
