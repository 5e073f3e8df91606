/**
 * Languages (issue 56): an agent's `language` (`auto`, or a tag), each source's detected language, and a language
 * on every passage and Q&A item, whose words are indexed with that language's text-search configuration.
 *
 * - `search_fold(text)`: lower case, accents off (PGlite has no `unaccent`: a `translate` of the Latin letters).
 * - `text_search_config(tag)`: the tag's Snowball configuration, `simple` for the others.
 * - `search_vector(config, text)`: the words stemmed then folded, merged with the words folded then stemmed; a
 *   question's words, stemmed then folded, find "envíos" whether the visitor types "envio" or "envíos".
 * - `search_tsv` on `knowledge_chunks` and `qa_items`, filled by a trigger from the row's language (a row without
 *   one takes its source's, else its agent's, else English). Rows written before are left null here and
 *   re-indexed by a background job (`src/knowledge/Reindex.ts`) whose progress is `text_search_reindex`; the old
 *   `tsv` columns stay for now.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`alter table agents add column language text not null default 'auto'`
  yield* sql`alter table knowledge_sources add column language text`
  yield* sql`alter table knowledge_chunks add column language text`
  yield* sql`alter table knowledge_chunks add column search_tsv tsvector`
  yield* sql`alter table qa_items add column language text`
  yield* sql`alter table qa_items add column search_tsv tsvector`
  yield* sql.unsafe(`
    create function search_fold(t text) returns text language sql immutable parallel safe as $$
      select translate(lower(t),
        'áàâäãåāăąéèêëēėęěíìîïīįóòôöõøōőúùûüūůűųñńňçćčýÿšśžźżďťřľĺłđ',
        'aaaaaaaaaeeeeeeeeiiiiiioooooooouuuuuuuunnncccyysszzzdtrllld')
    $$`)
  yield* sql.unsafe(`
    create function text_search_config(tag text) returns regconfig language sql immutable parallel safe as $$
      select (case tag
        when 'ar' then 'arabic' when 'ca' then 'catalan' when 'da' then 'danish' when 'de' then 'german'
        when 'el' then 'greek' when 'en' then 'english' when 'es' then 'spanish' when 'eu' then 'basque'
        when 'fi' then 'finnish' when 'fr' then 'french' when 'hi' then 'hindi' when 'hu' then 'hungarian'
        when 'hy' then 'armenian' when 'id' then 'indonesian' when 'it' then 'italian' when 'lt' then 'lithuanian'
        when 'nb' then 'norwegian' when 'nl' then 'dutch' when 'pt' then 'portuguese' when 'ro' then 'romanian'
        when 'ru' then 'russian' when 'sr' then 'serbian' when 'sv' then 'swedish' when 'tr' then 'turkish'
        else 'simple' end)::regconfig
    $$`)
  yield* sql.unsafe(`
    create function search_vector(config regconfig, t text) returns tsvector language sql immutable parallel safe as $$
      select search_fold(to_tsvector(config, t)::text)::tsvector || to_tsvector(config, search_fold(t))
    $$`)
  yield* sql.unsafe(`
    create function knowledge_chunks_search() returns trigger language plpgsql as $$
    begin
      if new.language is null then
        new.language := coalesce(
          (select s.language from knowledge_sources s where s.id = new.source_id),
          (select nullif(a.language, 'auto') from agents a where a.id = new.agent_id),
          'en');
      end if;
      new.search_tsv := search_vector(text_search_config(new.language), new.content);
      return new;
    end
    $$`)
  yield* sql.unsafe(`
    create function qa_items_search() returns trigger language plpgsql as $$
    begin
      if new.language is null then
        new.language := coalesce(
          (select s.language from knowledge_sources s where s.id = new.source_id),
          (select nullif(a.language, 'auto') from agents a where a.id = new.agent_id),
          'en');
      end if;
      new.search_tsv := search_vector(text_search_config(new.language), new.question || ' ' || new.answer);
      return new;
    end
    $$`)
  yield* sql`
    create trigger knowledge_chunks_search before insert or update of content, language on knowledge_chunks
      for each row execute function knowledge_chunks_search()`
  yield* sql`
    create trigger qa_items_search before insert or update of question, answer, language on qa_items
      for each row execute function qa_items_search()`
  yield* sql`create index knowledge_chunks_search_tsv on knowledge_chunks using gin (search_tsv)`
  yield* sql`create index qa_items_search_tsv on qa_items using gin (search_tsv)`
  yield* sql`create index knowledge_chunks_language on knowledge_chunks (agent_id, language)`
  yield* sql`create index qa_items_language on qa_items (agent_id, language)`
  yield* sql`alter table knowledge_chunks alter column search_tsv set statistics 0`
  yield* sql`alter table qa_items alter column search_tsv set statistics 0`
  yield* sql`
    create table text_search_reindex (
      id boolean primary key default true check (id),
      status text not null check (status in ('none', 'queued', 'running', 'done', 'failed')),
      phase text check (phase in ('sources', 'chunks', 'qa')),
      cursor text,
      done bigint not null default 0,
      total bigint not null default 0,
      started_at timestamptz,
      finished_at timestamptz,
      last_error text,
      updated_at timestamptz not null default now()
    )`
  yield* sql`
    insert into text_search_reindex (status, phase, total)
    select case when n > 0 then 'queued' else 'none' end, case when n > 0 then 'sources' end, n
    from (select (select count(*) from knowledge_chunks) + (select count(*) from qa_items) as n) as rows`
})
