// Jory works on the clock: every 45 seconds, the next step of making a cask.

const WORK = [
  "sets a ring of oak staves upright inside a hoop.",
  "warms the staves over the brazier until they steam.",
  "winches the staves together and hammers a hoop down over them.",
  "rolls a finished cask to the door and starts another.",
];

function onLoad() {
  every(45, "work");
}

function work() {
  state.step = ((state.step || 0) + 1) % WORK.length;
  if (state.step === 0) state.casks = (state.casks || 0) + 1;
  self.emote(WORK[state.step]);
}

function onSay(actor, text) {
  if (text.toLowerCase().includes("cask")) self.say("That's " + (state.casks || 0) + " casks since I started, " + actor.name + ".");
}
