/**
 * API keys of this workspace and environment (`GET/POST /v1/keys`,
 * `DELETE /v1/keys/{id}`): the list, creating one (its full value shown once,
 * with a copy button) and revoking one.
 */
import type { KeyKind } from "../../../../schema/Auth.js"
import type { Key as ApiKey } from "../../../../schema/Keys.js"
import { useState } from "preact/hooks"
import type { Client } from "../api.js"
import { ConfirmButton, CopySecret, Empty, ErrorBox, Field, Loaded, LoadMore, Select, useAction, usePagedList, when } from "../ui.js"

const kinds: ReadonlyArray<readonly [KeyKind, string]> = [
  ["secret", "Secret (servers)"],
  ["widget", "Widget (public)"],
  ["forms", "Forms (public)"]
]

export const KeysPage = ({ client }: { client: Client }) => {
  const keys = usePagedList((limit, after) => client.list<ApiKey>("/v1/keys", { limit, starting_after: after }), [client])
  const [kind, setKind] = useState<KeyKind>("secret")
  const [name, setName] = useState("")
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const create = useAction()
  const revoke = useAction()
  const submit = async (e: Event) => {
    e.preventDefault()
    await create.run(async () => {
      const created = await client.call<{ secret: string }>("POST", "/v1/keys", {
        body: { kind, ...(name.trim() === "" ? {} : { name: name.trim() }) },
        headers: { "idempotency-key": crypto.randomUUID() }
      })
      setSecret(created.secret)
      setName("")
      keys.reload()
    })
  }
  return (
    <section>
      <h1>API keys</h1>
      <p class="muted">
        Keys of this workspace in the {client.environment === "test" ? "sandbox" : "live"} environment. A new key's full
        value is shown once; a lost key is revoked and replaced.
      </p>
      {secret === undefined ? null : <CopySecret label="New key, shown this once" secret={secret} onDone={() => setSecret(undefined)} />}
      <form class="card inline-form" onSubmit={submit} aria-labelledby="new-key">
        <h2 id="new-key">New key</h2>
        <Select label="Kind" value={kind} onChange={(v) => setKind(v as KeyKind)} options={kinds} />
        <Field label="Key name" value={name} onInput={setName} name="key-name" />
        <button type="submit" class="primary" disabled={create.pending}>
          Create key
        </button>
        {create.error === undefined ? null : <ErrorBox error={create.error} />}
      </form>
      {revoke.error === undefined ? null : <ErrorBox error={revoke.error} />}
      <Loaded resource={keys} what="keys">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No keys.</Empty>
          ) : (
            <table>
              <caption>Active keys</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Revoke</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((key) => (
                  <tr key={key.id}>
                    <td>
                      <code>{key.redacted}</code>
                    </td>
                    <td>{key.name ?? "—"}</td>
                    <td>{key.kind}</td>
                    <td class="small">{key.scopes.length === 0 ? "—" : key.scopes.join(", ")}</td>
                    <td>{when(key.created_at)}</td>
                    <td>
                      <ConfirmButton
                        label="Revoke"
                        what={key.name ?? key.redacted}
                        confirm={`Revoke ${key.redacted}? Requests with it fail at once.`}
                        onConfirm={async () => {
                          if (await revoke.run(() => client.call("DELETE", `/v1/keys/${key.id}`))) keys.reload()
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <LoadMore list={keys} what="keys" />
    </section>
  )
}
