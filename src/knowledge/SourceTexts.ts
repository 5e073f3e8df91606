/**
 * A source's extracted text as its published pieces in `knowledge_source_texts` tell it (written in steps with the
 * chunk draft by `ChunkDraftsRepo.ts`), read a piece a statement: one value of megabytes held the database for
 * seconds.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SourceId } from "../../schema/Ids.js"
import { decodeAll } from "../db/Sql.js"

const Shown = Schema.Struct({ draft: Schema.String, pieces: Schema.Number })
const Piece = Schema.Struct({ piece: Schema.String })

/** A source's text as its published pieces tell it, read a piece a statement; none when it has no pieces shown. */
export const readSourceText = (sql: SqlClient.SqlClient, sourceId: SourceId): Effect.Effect<Option.Option<string>> =>
  Effect.gen(function* () {
    // bounded: a text replaced as it is read (a refresh published meanwhile) is read again, a few times at most
    for (let round = 0; round < 5; round++) {
      const [shown] = yield* decodeAll(Shown, sql`
        select draft, count(*)::int as pieces from knowledge_source_texts
        where source_id = ${sourceId} and draft <> all(array(select id from knowledge_chunk_drafts))
        group by draft limit 1`)
      if (shown === undefined) return Option.none()
      const pieces: Array<string> = []
      for (let position = 0; position < shown.pieces; position++) {
        const [piece] = yield* decodeAll(Piece, sql`
          select piece from knowledge_source_texts where draft = ${shown.draft} and position = ${position}`)
        if (piece === undefined) break
        pieces.push(piece.piece)
      }
      if (pieces.length === shown.pieces) return Option.some(pieces.join(""))
    }
    return yield* Effect.dieMessage(`the text of source ${sourceId} changed at every read`)
  })
