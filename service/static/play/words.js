// Every event of a match as a sentence a player would say, in the page's language: the
// game's own events (each game module's tell()), then the service's. Both the live table's
// log and the replay say events through tell() here. An event says only what its fields
// hold, and a seat sees only the events it may see (the API redacts them), so nothing
// hidden is ever told.
import { and, t } from "./i18n.js";
import * as dekal from "./games/dekal.js";
import * as ducale from "./games/ducale.js";
import * as gaudi from "./games/gaudi.js";
import * as pacal from "./games/pacal.js";

export const GAMES = { dekal, pacal, gaudi, ducale };

const BOTS = { random: "random bot", greedy: "greedy bot", mcts: "MCTS bot" };

// A seat's name: the person's, else its bot's kind, else "seat 2".
export function seatName(seats, seat) {
  const s = seats?.[seat];
  if (s?.name) return s.name;
  if (s?.bot) return t(BOTS[s.bot] ?? "{bot} bot", { bot: s.bot });
  return t("seat {n}", { n: seat + 1 });
}

// One event in words; null for an action's echo (the events after it tell the move) and
// for an event type that has no words yet (tests/browser/test_words.py fails on those).
export function tell(game, event, name) {
  const said = say(game, event, name);
  return said && said[0].toUpperCase() + said.slice(1); // "bot glouton choisit…" starts a sentence
}

function say(game, event, name) {
  if (event.type === "action") return null;
  if (event.type === "match_over") return over(game, event, name);
  const said = GAMES[game]?.tell(event, name);
  if (said) return said;
  const who = Number.isInteger(event.seat) ? name(event.seat) : "";
  switch (event.type) {
    case "match_created": return t(event.rematch_of ? "The table of the rematch is set for {n} players." : "The table is set for {n} players.",
      { n: event.seats?.length ?? 0 });
    case "seat_joined": return t("{who} takes seat {n}.", { who: event.name || (event.bot ? seatName([{ bot: event.bot }], 0) : who), n: event.seat + 1 });
    case "match_started": return t("Every seat is taken: the match begins.");
    case "timeout": return t("{who} ran out of time.", { who });
    case "seat_left": return t("{who} leaves the table.", { who });
    case "seat_renamed": return t("Seat {n} is now called {name}.", { n: event.seat + 1, name: event.name });
    case "resigned": return t("{who} resigns.", { who });
    case "aborted": return t("{who} calls the match off.", { who });
    case "rematch_offered": return t("{who} offers a rematch.", { who });
    case "bot_timeout": return t("{who} did not answer in time.", { who });
    case "bot_illegal_action": return t("{who} tried a move the rules refuse.", { who });
    case "webhook_given_up": return t("The bot's server could not be reached: its seat plays no more.");
    default: return null; // an event without words yet: the caller says something plainer
  }
}

// The end: who won, and how; Gaudí adds the objectives, revealed.
function over(game, event, name) {
  const winners = (event.winners || []).map(name);
  const why = { resignation: "The match ended with a resignation.", abort: "The match was called off." }[event.ended_by];
  const said = [
    winners.length ? t(winners.length === 1 ? "The match is over: {who} wins." : "The match is over: {who} win.", { who: and(winners) })
      : t("The match is over, with no winner."),
    why ? t(why) : "",
    game === "gaudi" && !event.ended_by ? gaudi.tellEnd(event, name) : "",
  ];
  return said.filter(Boolean).join(" ");
}

// What the page shows for an event: its words, else a plain sentence.
export const sentence = (game, event, name) => tell(game, event, name)
  ?? (Number.isInteger(event.seat) ? t("{who} plays.", { who: name(event.seat) }) : t("The table moves on."));
