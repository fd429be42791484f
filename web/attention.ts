/**
 * Getting the player's attention: while the tab is hidden its title counts the chat that
 * arrived meanwhile, `(3) …`; and, when the player switches it on (off by default, kept in
 * this browser), a short beep for what is meant for them (whispers, tells, their name).
 */
import { h } from './dom.ts';

const SOUND_KEY = 'mud-play-sound';

export interface Attention {
  /** Something new arrived; `forMe` when it is addressed to or names the player. */
  notice(forMe: boolean): void;
  /** The sound setting, for the page to place. */
  control: HTMLElement;
  /** Gives the title back. */
  dispose(): void;
}

export function attention(): Attention {
  const title = document.title;
  let unread = 0;
  let audio: AudioContext | null = null;

  const showCount = () => {
    document.title = unread > 0 ? `(${unread}) ${title}` : title;
  };
  const onVisibility = () => {
    if (document.visibilityState === 'visible') {
      unread = 0;
      showCount();
    }
  };
  document.addEventListener('visibilitychange', onVisibility);

  const toggle = h('input', { attrs: { type: 'checkbox', id: 'sound' } });
  toggle.checked = localStorage.getItem(SOUND_KEY) === 'on';
  // Browsers let a page play sound only after the player did something on it: this click.
  const ready = () => {
    if (toggle.checked) audio ??= new AudioContext();
  };
  toggle.addEventListener('change', () => {
    localStorage.setItem(SOUND_KEY, toggle.checked ? 'on' : 'off');
    ready();
    if (toggle.checked) beep();
  });
  document.addEventListener('pointerdown', ready, { once: true });
  document.addEventListener('keydown', ready, { once: true });

  const beep = () => {
    if (!audio) return;
    const oscillator = audio.createOscillator();
    const gain = audio.createGain();
    oscillator.frequency.value = 880;
    gain.gain.setValueAtTime(0.12, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.18);
    oscillator.connect(gain).connect(audio.destination);
    oscillator.start();
    oscillator.stop(audio.currentTime + 0.18);
  };

  return {
    notice: (forMe) => {
      if (document.visibilityState === 'hidden') {
        unread++;
        showCount();
      }
      if (forMe && toggle.checked) beep();
    },
    control: h('label', { class: 'sound', attrs: { title: 'A beep for whispers, tells and mentions of your name' } }, toggle, ' Sound'),
    dispose: () => {
      document.removeEventListener('visibilitychange', onVisibility);
      document.removeEventListener('pointerdown', ready);
      document.removeEventListener('keydown', ready);
      void audio?.close();
      audio = null;
      unread = 0;
      showCount();
    },
  };
}
