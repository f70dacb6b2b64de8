// French for every text of the page, keyed by its English (i18n.js t()).
// The games' terms are the rulebooks' own: manche, pioche, défausse, brelan, carré, tierce...
export const FR = {
};
