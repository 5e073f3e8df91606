/** What each endpoint requires of the caller's key, read once from the contract's annotations. */
import * as HttpApi from "@effect/platform/HttpApi"
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import { Api } from "../../schema/Api.js"
import { type Scope, RequiredScope, WidgetScope } from "../../schema/Auth.js"

export interface EndpointPolicy {
  /** The scope a secret key needs; none means any secret key may call it. */
  readonly scope: Option.Option<Scope>
  /** The scope that lets a widget key call it; none means widget keys are refused. */
  readonly widgetScope: Option.Option<Scope>
}

const policies = new Map<string, EndpointPolicy>()
HttpApi.reflect(Api, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, mergedAnnotations }) => {
    policies.set(`${endpoint.method} ${endpoint.path}`, {
      scope: Context.getOption(mergedAnnotations, RequiredScope),
      widgetScope: Context.getOption(mergedAnnotations, WidgetScope)
    })
  }
})

const open: EndpointPolicy = { scope: Option.none(), widgetScope: Option.none() }

/** The policy of the endpoint whose route pattern (`/v1/agents/:id`) matched. */
export const policyOf = (method: string, routePath: string): EndpointPolicy =>
  policies.get(`${method} ${routePath}`) ?? open
