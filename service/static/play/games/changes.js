// What a change brought, for the games to mark it for a moment (.fresh, app.js): not a game.

// For each card of `now`, whether `was` lacked it (counted as many times as it is held).
export const added = (now, was) => {
  const left = [...(was ?? [])];
  return (now ?? []).map((card) => {
    const i = left.indexOf(card);
    if (i >= 0) left.splice(i, 1);
    return i < 0;
  });
};
