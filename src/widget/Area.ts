/** The widget area as the composition root uses it: its chat programs and its API group. */
import * as Layer from "effect/Layer"
import { Authentication } from "../../schema/Auth.js"
import { Agents } from "../agents/Agents.js"
import { Conversations } from "../conversations/Conversations.js"
import * as ConversationsArea from "../conversations/Area.js"
import { Leads } from "../leads/Leads.js"
import { Tickets } from "../tickets/Tickets.js"
import { WidgetChat } from "./Chat.js"
import { ChatDemoRoutes } from "./Demo.js"
import { ChatElementRoutes } from "./ElementBundle.js"
import { WidgetHttp } from "./Http.js"

/** Over the conversations area's one instance: the widget's chat shares its live replies. */
export const Live = WidgetChat.Default.pipe(Layer.provide([ConversationsArea.Live, Tickets.Default, Agents.Default]))

/** Its API group: the server builds it with only `ApiServices`, the services its handlers use (`Server.ts`). */
export const ApiGroups = WidgetHttp
export const ApiServices = [Authentication, Conversations, Leads, WidgetChat] as const

/** Beside the API: the `<service-chat>` bundle and its demo page. */
export const Routes = Layer.mergeAll(ChatElementRoutes, ChatDemoRoutes)
