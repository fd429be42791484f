// Smudge wanders the yard, the cooper's shed and the wash-house, and now and then does what cats do.

const WAYS = {
  heron_yard: ["east", "west"],
  coopers_shed: ["west"],
  wash_house: ["east"],
};

const HABITS = ["washes a paw with great care.", "stretches, yawns, and settles again.", "stares at nothing in the corner, tail twitching."];

function onLoad() {
  every(20, "roam");
}

function roam() {
  const ways = WAYS[room.id] || [];
  if (ways.length === 0 || random() < 0.3) {
    self.emote(HABITS[Math.floor(random() * HABITS.length)]);
    return;
  }
  self.move(ways[Math.floor(random() * ways.length)]);
}

function onEnter(actor) {
  if (random() < 0.5) self.emote("looks " + actor.name + " up and down, unimpressed.");
}
