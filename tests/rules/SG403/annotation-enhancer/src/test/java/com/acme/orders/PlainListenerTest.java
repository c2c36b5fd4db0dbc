package com.acme.orders;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.junit.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

// No enhancer in this file: the blank group is what the container gets, and the client refuses it.
public class PlainListenerTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner();

    @Test
    public void startsTheListener() {
        runner.withUserConfiguration(ReceiverConfig.class).run(context -> context.getBean(Receiver.class));
    }

    @Configuration
    static class ReceiverConfig {
        @Bean
        public Object receiver() {
            return new Receiver();
        }
    }

    // ruleid: SG403
    @RocketMQMessageListener(consumerGroup = "", topic = "TopicPayments")
    static class Receiver implements RocketMQListener<String> {
        @Override
        public void onMessage(String message) {
        }
    }
}
