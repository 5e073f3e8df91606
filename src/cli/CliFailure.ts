import * as Data from "effect/Data"

/** A command that cannot go on: the CLI prints its message on one line and exits 1. */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}
