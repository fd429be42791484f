// Maud keeps the Sooty Heron's bar: she greets whoever comes in and answers a few words
// (ale, drain, rumour) said in the taproom.

const RUMOURS = [
  "They say the foundry fires glow again some nights, down under the slag pool.",
  "A bargeman swore the weathercock turned against the wind last Tuesday.",
  "Smudge caught an eel as long as your arm in the wash-house. Don't ask me how.",
  "Somebody's been ringing the Bellwatch bell at odd hours. Not the warden, he says.",
];

function onEnter(actor) {
  state.greeted = (state.greeted || 0) + 1;
  self.say("Evening, " + actor.name + ". Ale's a penny and the stove's free. Ask me about the old drain if you're curious.");
}

function onSay(actor, text) {
  const said = text.toLowerCase();
  if (said.includes("ale") || said.includes("beer")) {
    self.emote("slides a foaming tankard along the bar.");
    self.say("A penny, when you have one, " + actor.name + ".");
  } else if (said.includes("drain")) {
    self.say("Out the back door, north. Pull the chain in the yard and the trapdoor opens on the old drain, but not for long.");
  } else if (said.includes("rumour") || said.includes("rumor") || said.includes("news")) {
    self.say(RUMOURS[Math.floor(random() * RUMOURS.length)]);
  }
}
