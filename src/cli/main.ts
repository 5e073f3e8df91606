/**
 * `npm run cli -- ...`: the admin CLI. Creates workspaces and API keys on the
 * running service through the admin RPC. Human-readable output by default,
 * `--json` for scripts; any failure is one line on stderr and exit code 1.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ApiKey, CreatedApiKey, EmbeddingsStatus, Workspace } from "../../schema/Admin.js"
import { Environment, KeyKind, Plan, Scope, SecretScopes, WidgetScopes } from "../../schema/Auth.js"
import { ApiKeyId, WorkspaceId } from "../../schema/Ids.js"
import { AdminClient, type Connection, connectionOptions, describeFailure, layer } from "./AdminClient.js"
import { crawl } from "./Crawl.js"
import { evaluate } from "./Evaluate.js"
import { ingest } from "./Ingest.js"

const common = {
  ...connectionOptions,
  json: Options.boolean("json").pipe(
    Options.withDescription("Print the result as JSON on stdout, for scripts (messages for people go to stderr)")
  )
}

/** Runs `f` with a client for the command's connection; prints JSON or the human form. */
const withClient =
  <Args extends Connection & { readonly json: boolean }, A>(
    f: (args: Args) => Effect.Effect<A, unknown, AdminClient>,
    human: (a: A) => string,
    json: (a: A) => unknown = (a) => a
  ) =>
  (args: Args) =>
    f(args).pipe(
      Effect.flatMap((a) => Console.log(args.json ? JSON.stringify(json(a), null, 2) : human(a))),
      Effect.provide(layer(args))
    )

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  if (rows.length === 0) return "(none)"
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

const fields = (entries: ReadonlyArray<readonly [string, string]>) =>
  entries.map(([k, v]) => `  ${`${k}:`.padEnd(13)}${v}`).join("\n")

const allScopes = { secret: SecretScopes, widget: WidgetScopes, forms: [] } as const

const scopesText = (key: ApiKey) =>
  key.scopes.length === allScopes[key.kind].length && key.kind !== "forms"
    ? `all ${key.kind} scopes`
    : key.scopes.length === 0
      ? "-"
      : key.scopes.join(" ")

const showWorkspace = (w: Workspace) =>
  [`workspace ${w.id}`, fields([["name", w.name], ["owner_email", w.owner_email], ["plan", w.plan], ["created_at", w.created_at]])].join("\n")

const workspacesCreate = Command.make(
  "create",
  {
    ...common,
    name: Options.text("name").pipe(Options.withPseudoName("NAME"), Options.withDescription("Workspace name, for people")),
    ownerEmail: Options.text("owner-email").pipe(
      Options.withPseudoName("EMAIL"),
      Options.withDescription("The owner's e-mail address; ticket notifications go there")
    ),
    plan: Options.choice("plan", Plan.literals).pipe(
      Options.withDescription("Plan: sets the monthly caps on tickets and replies (default free)"),
      Options.withDefault("free" as const)
    )
  },
  withClient(
    ({ name, ownerEmail, plan }) =>
      Effect.flatMap(AdminClient, (admin) => admin.CreateWorkspace({ name: name.trim(), owner_email: ownerEmail.trim(), plan })),
    (w) => `Created ${showWorkspace(w)}`
  )
).pipe(Command.withDescription("Create a workspace"))

const workspacesList = Command.make(
  "list",
  common,
  withClient(
    () => Effect.flatMap(AdminClient, (admin) => admin.ListWorkspaces()),
    (ws) => table(["ID", "NAME", "PLAN", "OWNER", "CREATED"], ws.map((w) => [w.id, w.name, w.plan, w.owner_email, w.created_at]))
  )
).pipe(Command.withDescription("List workspaces"))

const workspaces = Command.make("workspaces").pipe(
  Command.withDescription("Create and list workspaces"),
  Command.withSubcommands([workspacesCreate, workspacesList])
)

const showKey = (k: ApiKey) =>
  fields([
    ["id", k.id],
    ["workspace", k.workspace_id],
    ["kind", `${k.kind} (${k.environment})`],
    ["name", k.name ?? "-"],
    ["scopes", scopesText(k)],
    ["key", k.redacted]
  ])

const showCreated = (c: CreatedApiKey) =>
  [`Created ${c.key.kind} key ${c.key.id}`, showKey(c.key), "", `  ${c.secret}`, "", warning].join("\n")

/**
 * `keys create --json`: the key's record, and its full value under the key's
 * kind — `secret` (`sk_…`), `widget` (`widget_pk_…`) or `forms` (`pk_…`):
 * only a secret key's value is a secret.
 */
const createdJson = (c: CreatedApiKey): { readonly key: ApiKey } & { readonly [kind in KeyKind]?: string } => ({
  key: c.key,
  [c.key.kind]: c.secret
})

const warning = "Copy this key now: it is stored only as a hash and cannot be shown again."

const isScope = Schema.is(Scope)

const workspaceOption = (what: string) =>
  Options.text("workspace").pipe(
    Options.withSchema(WorkspaceId),
    Options.withPseudoName("WORKSPACE_ID"),
    Options.withDescription(`${what}: its id (ws_…, from workspaces list)`)
  )

const keysCreate = Command.make(
  "create",
  {
    ...common,
    workspace: workspaceOption("The workspace the key belongs to"),
    kind: Options.choice("kind", KeyKind.literals).pipe(
      Options.withDescription(
        "secret: sk_… for servers, the whole API within its scopes; widget: widget_pk_… for the widget surface in " +
          "browsers; forms: pk_… for the two form endpoints (Service-Api-Key)"
      )
    ),
    environment: Options.choice("environment", Environment.literals).pipe(
      Options.withDescription("test: the sandbox, its own isolated data (keys …_test_…); live: production (keys …_live_…)")
    ),
    name: Options.text("name").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("A label for people, shown by keys list"),
      Options.optional
    ),
    // Text with a schema, not a choice: the usage line stays short. Optional
    // and repeatable: without it the key gets every scope its kind may hold.
    scopes: Options.text("scope").pipe(
      Options.withPseudoName("SCOPE"),
      Options.repeated,
      Options.mapEffect((values) => {
        const unknown = values.filter((v) => !isScope(v))
        return unknown.length === 0
          ? Effect.succeed(values.filter(isScope))
          : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`Unknown scope ${unknown.join(", ")}; see --help`)))
      }),
      Options.withDescription(
        `Narrow the key to this scope; repeat for more. Default: every scope its kind may hold. ` +
          `Secret: ${SecretScopes.join(", ")}. Widget: ${WidgetScopes.join(", ")}. Forms keys hold none.`
      ),
      Options.optional,
      Options.map(Option.getOrElse((): ReadonlyArray<Scope> => []))
    )
  },
  withClient(
    (args) =>
      Effect.gen(function* () {
        const admin = yield* AdminClient
        const created = yield* admin.CreateKey({
          workspace_id: args.workspace,
          kind: args.kind,
          environment: args.environment,
          name: Option.getOrUndefined(args.name),
          scopes: args.scopes.length > 0 ? args.scopes : undefined
        })
        // In JSON mode stdout stays parseable; the warning still reaches the person.
        if (args.json) yield* Console.error(warning)
        return created
      }),
    showCreated,
    createdJson
  )
).pipe(Command.withDescription("Create an API key; prints the full key once"))

const keysList = Command.make(
  "list",
  { ...common, workspace: workspaceOption("The workspace whose keys to list") },
  withClient(
    ({ workspace }) => Effect.flatMap(AdminClient, (admin) => admin.ListKeys({ workspace_id: workspace })),
    (keys) =>
      table(
        ["ID", "KEY", "KIND", "ENV", "NAME", "SCOPES", "REVOKED"],
        keys.map((k) => [k.id, k.redacted, k.kind, k.environment, k.name ?? "-", scopesText(k), k.revoked_at ?? "-"])
      )
  )
).pipe(Command.withDescription("List a workspace's keys (redacted)"))

const keysRevoke = Command.make(
  "revoke",
  {
    ...common,
    key: Options.text("key").pipe(
      Options.withSchema(ApiKeyId),
      Options.withPseudoName("KEY_ID"),
      Options.withDescription("The key's id (key_…, from keys list), not its value")
    )
  },
  withClient(
    ({ key }) => Effect.flatMap(AdminClient, (admin) => admin.RevokeKey({ key_id: key })),
    (k) => `Revoked key ${k.id} (${k.redacted}) at ${k.revoked_at}`
  )
).pipe(Command.withDescription("Revoke an API key; requests with it then get 401"))

const keys = Command.make("keys").pipe(
  Command.withDescription("Create, list and revoke API keys"),
  Command.withSubcommands([keysCreate, keysList, keysRevoke])
)

const statusLine: Record<EmbeddingsStatus["status"], string> = {
  none: "up to date (no re-embedding was needed)",
  queued: "re-embedding queued",
  running: "re-embedding",
  done: "up to date (re-embedded)",
  failed: "re-embedding failed"
}

const showTextSearch = (t: EmbeddingsStatus["text_search"]) =>
  t.status === "none"
    ? []
    : [
        "",
        `text search ${t.status === "done" ? "re-indexed" : t.status === "failed" ? "re-indexing failed" : "re-indexing"}`,
        fields([
          ["rows", `${t.done} of ${t.total} done (${t.total === 0 ? 100 : Math.floor((100 * Math.min(t.done, t.total)) / t.total)}%)`],
          ...(t.started_at === null ? [] : [["started_at", t.started_at] as const]),
          ...(t.finished_at === null ? [] : [["finished_at", t.finished_at] as const]),
          ...(t.last_error === null ? [] : [["last_error", t.last_error] as const])
        ])
      ]

const showEmbeddings = (e: EmbeddingsStatus) => {
  const percent = e.total === 0 ? 100 : Math.floor((100 * Math.min(e.done, e.total)) / e.total)
  const under = e.status === "queued" || e.status === "running" || e.status === "failed"
  return [
    `embeddings ${statusLine[e.status]}`,
    fields([
      ["space", e.space ?? "- (not recorded yet)"],
      ...(e.configured_space === e.space ? [] : [["configured", `${e.configured_space} (this instance)`] as const]),
      ["previous", e.previous_space ?? "-"],
      ...(e.status === "none" ? [] : [["rows", `${e.done} of ${e.total} done (${percent}%)`] as const]),
      ...(e.started_at === null ? [] : [["started_at", e.started_at] as const]),
      ...(e.finished_at === null ? [] : [["finished_at", e.finished_at] as const]),
      ...(e.last_error === null ? [] : [["last_error", e.last_error] as const])
    ]),
    ...(e.status === "failed" ? ["", "A restart queues it again, from where it stopped."] : []),
    ...showTextSearch(e.text_search),
    ...(under && e.status !== "failed" ? ["", "Retrieval uses text search, and the vectors of the rows done, meanwhile."] : [])
  ].join("\n")
}

const embeddingsStatus = Command.make(
  "status",
  common,
  withClient(() => Effect.flatMap(AdminClient, (admin) => admin.EmbeddingsStatus()), showEmbeddings)
).pipe(Command.withDescription("The stored vectors' embedding space, and their re-embedding after the provider changed"))

const embeddings = Command.make("embeddings").pipe(
  Command.withDescription("The embedding space of the stored vectors"),
  Command.withSubcommands([embeddingsStatus])
)

const cli = Command.make("cli").pipe(
  Command.withDescription("Admin CLI for the assistant platform (talks to the running service)"),
  Command.withSubcommands([workspaces, keys, ingest, crawl, evaluate, embeddings])
)

const run = Command.run(cli, { name: "assistant-platform admin", version: "0.1.0" })

/**
 * @effect/cli heads the help of every text option with its type ("A
 * user-defined piece of text."), whatever its description: the help drops
 * that paragraph, each option's own description says what it takes.
 */
const typeFiller = /^ *A user-defined piece of text(?: that is confidential)?\.\r?\n(?:\r?\n)?/gm

/**
 * @effect/cli styles help and usage errors with ANSI codes whatever the output
 * is: keep them only on a terminal, and never with `--json`.
 */
const withPlainText = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Console.consoleWith((console) => {
    const json = process.argv.includes("--json")
    // eslint-disable-next-line no-control-regex -- ESC starts the colour codes stripped off a pipe
    const colourCodes = /\u001b\[[0-9;]*m/g
    const strip = (tty: boolean | undefined) => (arg: unknown) =>
      typeof arg !== "string"
        ? arg
        : (json || !tty ? arg.replace(colourCodes, "") : arg).replace(typeFiller, "")
    const out = strip(process.stdout.isTTY)
    const err = strip(process.stderr.isTTY)
    return Effect.withConsole(effect, {
      ...console,
      log: (...args) => console.log(...args.map(out)),
      info: (...args) => console.info(...args.map(out)),
      error: (...args) => console.error(...args.map(err)),
      unsafe: {
        ...console.unsafe,
        log: (...args) => console.unsafe.log(...args.map(out)),
        info: (...args) => console.unsafe.info(...args.map(out)),
        error: (...args) => console.unsafe.error(...args.map(err))
      }
    })
  })

run(process.argv).pipe(
  // @effect/cli already printed usage errors; everything else gets one line.
  Effect.tapErrorCause((cause) =>
    ValidationError.isValidationError(Cause.squash(cause)) ? Effect.void : Console.error(`error: ${describeFailure(cause)}`)
  ),
  withPlainText,
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
