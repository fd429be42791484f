// The yard's own verb: `pull chain` opens the trapdoor down into the old drain (the Flooded
// Culvert of the Drowned Works) for 30 seconds.

function onCommand(actor, verb, args) {
  if (verb !== "pull" || !args.toLowerCase().includes("chain")) return false;
  if (state.open) {
    actor.tell("The trapdoor already stands open; the chain hangs slack.");
    return true;
  }
  state.open = true;
  room.openExit("down", "flooded_culvert");
  room.echo(actor.name + " hauls on the rusty chain; the trapdoor in the cobbles swings open onto iron rungs going down into the dark.");
  actor.tell("You haul on the chain. Somewhere a counterweight creaks, and the trapdoor swings open.");
  after(30, "shut");
  return true;
}

function shut() {
  state.open = false;
  room.closeExit("down");
  room.echo("The counterweight drags the trapdoor shut with a bang.");
}
